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
# a proxy's name, or a whole number standing alone (`(64)`, not the 4 of `4D`), as an int prints (`08` is text)
_FIELD = re.compile(rf"{_PROXY.pattern}|((?<![\w.])(?:0|[1-9]\d*)(?![\w.]))")
_SIZE_ATTRIBUTES = frozenset({"shape", "ndim"})
_SIZE_METHODS = frozenset({"size", "dim", "numel", "nelement"})
_ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg, len})


def formatted_messages(gm: fx.GraphModule) -> fx.GraphModule:
    """`gm` with each string argument naming a size's proxy built from that size (module docstring);
    `gm` itself where there is none."""
    # only a string naming a proxy can name a size's (strings are few: 20,000 nodes' arguments are read once)
    messages = [value for node in gm.graph.nodes for value in (*node.args, *node.kwargs.values()) if isinstance(value, str) and "Proxy(" in value]
    if not messages:
        return gm
    names = {node.name: node for node in gm.graph.nodes}
    if not any(_size_named(value, names) for value in messages):
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


def is_message(node: fx.Node) -> bool:
    """A message formatted_messages built: `"...".format(...)` on a string, never a tensor."""
    return node.op == "call_method" and node.target == "format" and bool(node.args) and isinstance(node.args[0], str)


def _size_named(value: object, names: dict[str, fx.Node]) -> fx.Node | None:
    """The size node a string names as a proxy; None unless it names exactly one, a size's. A message
    of several values is left as it is: a new trace makes them in another order than the export
    reads them (`x.ndim` only where the message reads it), so it would not come back the same."""
    if not isinstance(value, str):
        return None
    found = [names.get(name) for name in _PROXY.findall(value)]
    if len(found) != 1 or found[0] is None or not _is_size(found[0]):
        return None
    return found[0]


def _varying_numbers(graph: fx.Graph, named: dict[str, fx.Node]) -> set[str]:
    """The messages (as templates with their checked numbers as fields) the graph holds with other
    numbers in them: the checks of one source line in instances of other sizes, whose numbers
    become fields too."""
    seen: dict[str, set[tuple[int | None, ...]]] = {}
    for node in graph.nodes:
        for value in (*node.args, *node.kwargs.values()):
            if _size_named(value, named) is not None:
                template, fields = _template(str(value), _checked_numbers(node))
                seen.setdefault(template, set()).add(fields)
    return {template for template, fields in seen.items() if len(fields) > 1}


def _template(text: str, numbers: set[int]) -> tuple[str, tuple[int | None, ...]]:
    """`text` as a format string and its fields: each proxy in it (None), and each of `numbers`
    standing alone in it (that number)."""
    fields: list[int | None] = []

    def field(found: re.Match[str]) -> str:
        if found.group(1) is not None:
            fields.append(None)
        elif int(found.group(2)) in numbers:
            fields.append(int(found.group(2)))
        else:
            return found.group(0)
        return "{}"

    return _FIELD.sub(field, text.replace("{", "{{").replace("}", "}}")), tuple(fields)


def _formatted(
    graph: fx.Graph, user: fx.Node, value: object, named: dict[str, fx.Node], place: dict[fx.Node, int], varying: set[str]
) -> object:
    """`value`, or for a message naming a size made before `user` in its module call, a node formatting
    it into the message (just before `user`); a checked number is a field too where the message varies in it."""
    size = _size_named(value, named)
    if size is None or place[size] > place[user] or not _same_call(size, user):
        return value
    template, fields = _template(str(value), _checked_numbers(user))
    if template not in varying:
        template, fields = _template(str(value), set())
    with graph.inserting_before(user):
        message = graph.call_method("format", (template, *(size if field is None else field for field in fields)))
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
