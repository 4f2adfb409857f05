"""Which `__init__` lines build a child that a shared class may take whole from its callers.

Instances of one source class whose child differs in more than literals (an `nn.SiLU()` or an
`nn.Identity()`, a stage's `nn.Sequential` of 2 or 6 blocks) share a class that takes the child
as an argument, as timm's `act_layer`; `init_template` is what such classes must share: their
`__init__` with literals masked and those children blanked.
"""

from __future__ import annotations

import ast
import re

from .code_slots import literal_slots, masked, per_line
from .ir import ClassIR
from .regions import code_lines
from .runs import CONTAINERS, repeat_count
from .spelled_calls import ordered_children, parsed_line

# A line that builds one child: instances whose child differs in more than literals (`nn.SiLU()` or
# `nn.Identity()`, a stage's `nn.Sequential` of 2 or 6 blocks) share a class that takes the child as
# an argument, as timm's `act_layer`. A layer (its arguments layers too: `BatchNormAct2d(16,
# act=nn.SiLU())`), or a Sequential or ModuleList of such (a stage's blocks, each taking a layer its
# caller built: `MetaFormerBlock(320, res_scale1=Scale(320))`), or a call of a generated class
# whatever its arguments build (timm efficientvit's `ResidualBlock(main=MBConv(..., inverted_conv=
# ConvNormAct(...)))`, its blocks' convolutions with a norm or without). A torch.nn layer stack
# deeper than that (`nn.Sequential(nn.Conv2d(...), nn.Sequential(...))`) stays built by its class,
# which then has variants.
_CHILD = re.compile(r"^self\.\w+ = [A-Za-z_][\w.]*\(")


@per_line
def is_child(line: str) -> bool:
    """True when the line builds one child a shared class may take whole (see _CHILD)."""
    if _CHILD.match(line) is None:
        return False
    tree = parsed_line(line)
    value = getattr(tree.body[0], "value", None) if tree is not None and tree.body else None
    if not isinstance(value, ast.Call):
        return False
    if ast.unparse(value.func) in CONTAINERS:
        return all(_is_built_layer(item) or _is_generated(item) for a in _arguments(value) for item in _items(a))
    return _is_built_layer(value) or _is_generated(value)


def _is_generated(node: ast.expr) -> bool:
    """A call of a class of module.py's own (not `nn.`), whatever its arguments build: a block whose
    instances differ in how their children are built is one class taking the child (the source's
    `ResidualBlock(main=MBConv(...))`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name)


def _items(node: ast.expr) -> list[ast.expr]:
    """A container argument's children: a list's items, or the one call a list of copies repeats
    (`*[Block(64) for _ in range(3)]`, as collect writes a run of children built alike)."""
    if isinstance(node, ast.Starred):
        return _items(node.value)
    if (named := ordered_children(node)) is not None:
        return [child for _, child in named]
    if isinstance(node, ast.List):
        return [item for element in node.elts for item in _items(element)]
    if isinstance(node, ast.ListComp) and repeat_count(node) is not None:
        return [node.elt]
    return [node]


def _is_built_layer(node: ast.expr) -> bool:
    """A layer, or one call whose arguments are layers or no calls (`MetaFormerBlock(64, res_scale1=Scale(64))`)."""
    return _is_layer(node) or (isinstance(node, ast.Call) and all(_is_layer(a) or not _calls(a) for a in _arguments(node)))


def _is_layer(node: ast.expr) -> bool:
    """One call whose arguments are no calls: `nn.SiLU(inplace=True)`, `Block(64, stride=2)`."""
    return isinstance(node, ast.Call) and not any(_calls(a) for a in _arguments(node))


def _calls(node: ast.expr) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _arguments(node: ast.AST) -> list[ast.expr]:
    """A call's arguments (none for anything else)."""
    return [*node.args, *(k.value for k in node.keywords)] if isinstance(node, ast.Call) else []


def init_template(cls: ClassIR, known: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """`__init__` with its literals masked and the children a shared class takes as arguments blanked."""
    init = tuple(f"{line.split(' = ', 1)[0]} = <child>" if is_child(line) or attribute(line) in cls.whole_children else line for line in cls.init_lines)
    return masked(init, literal_slots(init, known))


def attribute(line: str) -> str:
    """The attribute a `self.<name> = ...` line sets, else ""."""
    match = re.match(r"self\.(\w+) = ", line)
    return match[1] if match else ""


def built_child(line: str) -> tuple[str, str] | None:
    """(attribute, class name) of a line building a child as a call of a class of module.py's own
    (`self.attn = Attention_1()`), else None."""
    match = _BUILT.match(line)
    return (match[1], match[2]) if match else None


_BUILT = re.compile(r"self\.(\w+) = (\w+)\(")


def attributes(cls: ClassIR) -> set[str]:
    """Every attribute `__init__` assigns."""
    return {name for line in cls.init_lines if (name := attribute(line))}


def names_on_self(cls: ClassIR) -> set[str]:
    """Every name the class sets or reads on `self`: attributes, buffers and children registered by name
    (in code: not in a comment quoting the source's `self.num_heads`)."""
    lines = code_lines((*cls.init_lines, *cls.forward_lines))
    named = {m[1] for line in lines for m in re.finditer(r"self\.(?:register_buffer|register_parameter|add_module)\(\s*[\"'](\w+)[\"']", line)}
    return named | {m[1] for line in lines for m in re.finditer(r"self\.(\w+)", line)}
