"""Messages symbolic_trace built from a traced size, written back as the formatting they were.

timm checks `_assert(H == self.img_size[0], f"Input height ({H}) doesn't match model (64).")`.
symbolic_trace formats the proxy of `H` into the string: the graph holds the constant "Input
height (Proxy(getitem_2)) doesn't match model (64).", naming a node the generated code has no
value of. Where a message names one proxy, that of a size made in the same module call (`x.shape`,
`x.ndim`, an item of them, `x.size()` and int arithmetic on those: never a tensor, so formatting
costs nothing that matters), the constant becomes the formatting of that value, as the source
wrote it: `"Input height ({}) doesn't match model (64).".format(h)`. A check that passes computes
the same; one that fails says the size it found. A new trace of the export formats its own proxy
into the message again and comes back to the same code. Left as traced: a message of several values
(a new trace would make them in another order), and a name of another module call (a GraphModule
traced before, inside the model, holds messages naming nodes of its own first trace).
"""

from __future__ import annotations

import operator
import re

from torch import fx

from .subgraphs import copy_graph, with_graph

_PROXY = re.compile(r"Proxy\(([A-Za-z_][A-Za-z0-9_]*)\)")
# a proxy's name, or a whole number standing alone (`(64)`, not the 4 of `4D`)
_NUMBER = re.compile(r"(?<![\w.])(?:0|[1-9]\d*)(?![\w.])")  # as an int prints: `08` is text
_FIELD = re.compile(rf"Proxy\(([A-Za-z_][A-Za-z0-9_]*)\)|({_NUMBER.pattern})")
_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})
_SIZE_METHODS = frozenset({"size", "dim", "numel", "nelement"})
_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg, len})


def formatted_messages(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with each string argument naming a size's proxy built from that size (module docstring);
    `gm` itself where there is none."""
    names = {node.name: node for node in gm.graph.nodes}
    if not any(_sizes_named(value, names) for node in gm.graph.nodes for value in (*node.args, *node.kwargs.values())):
        return gm
    copies: dict[fx.Node, fx.Node] = {}
    graph = copy_graph(gm.graph, copies)
    named = {name: copies[node] for name, node in names.items() if node in copies}  # the output is made anew
    place = {node: i for i, node in enumerate(graph.nodes)}
    varying = _varying_numbers(graph, named)
    for node in list(graph.nodes):
        node.args = tuple(_formatted(graph, node, value, named, place, varying) for value in node.args)
        node.kwargs = {key: _formatted(graph, node, value, named, place, varying) for key, value in node.kwargs.items()}
    graph.lint()
    return with_graph(gm, graph)


def _sizes_named(value: object, names: dict[str, fx.Node]) -> list[fx.Node] | None:
    """The size node a string names as a proxy; None unless it names exactly one, a size's. A message
    of several values is left as it is: a new trace makes them in another order than the export
    reads them (`x.ndim` only where the message reads it), so it would not come back the same."""
    if not isinstance(value, str):
        return None
    found = [names.get(name) for name in _PROXY.findall(value)]
    if len(found) != 1 or found[0] is None or not _is_size(found[0]):
        return None
    return [found[0]]


def _varying_numbers(graph: fx.Graph, named: dict[str, fx.Node]) -> set[str]:
    """The messages (their checked numbers masked) the graph holds with other numbers in them: the
    checks of one source line in instances of other sizes, whose numbers become fields too."""
    seen: dict[str, set[tuple[str, ...]]] = {}
    for node in graph.nodes:
        checked = _checked_numbers(node)
        for value in (*node.args, *node.kwargs.values()):
            if _sizes_named(value, named) is not None:
                numbers = tuple(n for n in _NUMBER.findall(str(value)) if int(n) in checked)
                seen.setdefault(_masked(str(value), checked), set()).add(numbers)
    return {template for template, numbers in seen.items() if len(numbers) > 1}


def _masked(text: str, numbers: set[int]) -> str:
    """`text` with each proxy in it, and each of `numbers` standing alone in it, as `{}`."""
    return _FIELD.sub(lambda found: "{}" if found.group(1) is not None or int(found.group(2)) in numbers else found.group(0), text)


def _formatted(
    graph: fx.Graph, user: fx.Node, value: object, named: dict[str, fx.Node], place: dict[fx.Node, int], varying: set[str]
) -> object:
    """`value`, or for a message naming sizes made before `user`, a node formatting them into it (just
    before `user`, in its module call); a checked number is a field too where the message varies in it."""
    sizes = _sizes_named(value, named)
    if sizes is None or not all(place[size] < place[user] and _same_call(size, user) for size in sizes):
        return value
    checked = _checked_numbers(user)
    if _masked(str(value), checked) not in varying:
        checked = set()
    fields: list[fx.Node | int] = []
    left = iter(sizes)

    def field(found: re.Match[str]) -> str:
        if found.group(1) is not None:
            fields.append(next(left))
        elif int(found.group(2)) in checked:
            fields.append(int(found.group(2)))
        else:
            return found.group(0)
        return "{}"

    template = _FIELD.sub(field, str(value).replace("{", "{{").replace("}", "}}"))
    with graph.inserting_before(user):
        message = graph.call_method("format", (template, *fields))
    message.meta = {key: user.meta[key] for key in ("stack_trace", "nn_module_stack") if key in user.meta}
    return message


def _same_call(size: fx.Node, user: fx.Node) -> bool:
    """True where `size` was made in the module call that checks it: a proxy's name is only text, and
    a GraphModule traced again inside a model holds messages naming nodes of its own first trace."""
    return _innermost(size) == _innermost(user)


def _innermost(node: fx.Node) -> object:
    stack = node.meta.get("nn_module_stack") or {}
    return next(reversed(stack.keys()), None) if isinstance(stack, dict) else None


def _checked_numbers(user: fx.Node) -> set[int]:
    """The int literals the condition a message goes with compares with (`h == 64`): the message's
    own mention of them (`"... match model (64)."`) is the same value, as the source formatted it."""
    return {a for node in user.all_input_nodes for a in node.args if type(a) is int}


def _is_size(node: fx.Node) -> bool:
    """True for a node whose value is a size: an int or a torch.Size, never a tensor."""
    if node.op == "call_function" and node.target is getattr and len(node.args) == 2:
        return node.args[1] in _SIZE_ATTRIBUTES
    if node.op == "call_method" and node.target in _SIZE_METHODS:
        return True
    if node.op == "call_function" and node.target is operator.getitem:
        base = node.args[0]
        return isinstance(base, fx.Node) and _is_size(base)
    if node.op == "call_function" and node.target in _ARITHMETIC:
        operands = [a for a in node.args if isinstance(a, fx.Node)]
        return bool(operands) and all(_is_size(a) for a in operands) and all(isinstance(a, (fx.Node, int)) for a in node.args)
    return False
