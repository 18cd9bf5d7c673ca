"""The walk over a chat template's jinja2 AST that the lint rules (:mod:`.rules`) look at.

:class:`Walker` visits every node in source order with a :class:`Ctx` (how the node's value is
used, which expressions are known to be defined there), registers the tokens each node introduces
with :class:`~.source_map.NodePositions`, and records one :class:`Visit` per node.  :class:`Scope`
holds what is known about the template's names: its macros, the names it binds, and the ones it
sets from dict or list values.  Nothing here decides what to report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from jinja2 import nodes

from .runtime_subset import ALWAYS_DEFINED, UNPARSED_OPERATORS
from .source_map import NodePositions

__all__ = ["LOADER_TAGS", "Ctx", "Scope", "Visit", "Walker", "guards", "neg_guards"]

# Results of these filters are lists in both engines.
_LIST_FILTERS = frozenset({"list", "map", "select", "selectattr", "reject", "rejectattr", "sort",
                           "unique", "batch", "slice", "reverse", "items", "dictsort"})
_LIST_NAMES = frozenset({"messages", "tools", "documents"})
_LIST_ATTRS = frozenset({"tool_calls", "messages"})
# Attributes that chat messages and tool schemas practically always carry.
_PRESENT_ATTRS = frozenset({"role", "content", "type", "text", "function", "name", "arguments",
                            "parameters", "description"})
# The tags that need a template loader, by node type: their keyword.
LOADER_TAGS = {nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "from",
               nodes.Extends: "extends"}


class Ctx(NamedTuple):
    boolean: bool = False  # the value is only used for its truthiness
    in_boolop: bool = False  # inside an and/or that is already reported
    literal: bool = False  # inside a list/dict literal of the same expression
    guards: frozenset = frozenset()  # expressions known to be defined here


class Visit(NamedTuple):
    node: nodes.Node
    ctx: Ctx


def _ekey(node: nodes.Node) -> str:
    return repr(node)


def guards(test: nodes.Node) -> frozenset:
    """Expressions that are defined (in the runtime) when ``test`` is true."""
    if isinstance(test, (nodes.Name, nodes.Getattr)):
        return frozenset({_ekey(test)})
    if isinstance(test, nodes.Test) and test.name in ("defined", "string", "sequence", "iterable",
                                                      "number", "boolean", "true", "false"):
        return frozenset({_ekey(test.node)})
    if isinstance(test, nodes.And):
        return guards(test.left) | guards(test.right)
    if isinstance(test, nodes.Not):
        return neg_guards(test.node)
    if isinstance(test, nodes.Compare) and len(test.ops) == 1 and test.ops[0].op == "in" \
            and isinstance(test.expr, nodes.Const) and isinstance(test.expr.value, str):
        # `'k' in x` (true only when the key exists) guards `x.k`
        return frozenset({_ekey(nodes.Getattr(test.ops[0].expr, test.expr.value, "load"))})
    if isinstance(test, nodes.Compare) and isinstance(test.expr, nodes.Filter) \
            and test.expr.name == "length" and test.expr.node is not None:
        # `x|length > 0` guards the uses of x inside (its own |length is reported once)
        return frozenset({_ekey(test.expr.node)})
    return frozenset()


def neg_guards(test: nodes.Node) -> frozenset:
    """Expressions that are defined (in the runtime) when ``test`` is false."""
    if isinstance(test, nodes.Not):
        return guards(test.node)
    if isinstance(test, nodes.Test) and test.name == "undefined":
        return frozenset({_ekey(test.node)})
    if isinstance(test, nodes.Or):
        return neg_guards(test.left) | neg_guards(test.right)
    return frozenset()


class Scope:
    """What is known about the names of one template (the same everywhere in it)."""

    def __init__(self, ast: nodes.Template) -> None:
        self.macros = {m.name for m in ast.find_all(nodes.Macro)}
        self.bound = {n.name for n in ast.find_all(nodes.Name) if n.ctx in ("store", "param")}
        self.bound |= {"loop"}
        self.dict_names = {a.target.name for a in ast.find_all(nodes.Assign)
                           if isinstance(a.target, nodes.Name) and isinstance(a.node, nodes.Dict)}
        self.list_names: set[str] = set()
        self.list_names = {a.target.name for a in ast.find_all(nodes.Assign)
                           if isinstance(a.target, nodes.Name) and self.listlike(a.node)}

    def listlike(self, node: nodes.Node) -> bool:
        """Whether ``node`` is evidently a list (not a string) in both engines."""
        if isinstance(node, (nodes.List, nodes.Tuple)):
            return True
        if isinstance(node, nodes.Name):
            return node.name in _LIST_NAMES or node.name in self.list_names
        if isinstance(node, nodes.Getattr):
            return node.attr in _LIST_ATTRS
        if isinstance(node, nodes.Getitem):
            return isinstance(node.arg, nodes.Slice) and self.listlike(node.node)
        if isinstance(node, nodes.Filter):
            return node.name in _LIST_FILTERS
        if isinstance(node, nodes.Call):
            callee = node.node
            return (isinstance(callee, nodes.Getattr) and callee.attr in ("split", "rsplit")) or (
                isinstance(callee, nodes.Name) and callee.name == "range")
        return False

    def maybe_undefined(self, node: nodes.Node | None, ctx: Ctx) -> bool:
        """Whether ``node`` may be undefined where ``ctx`` holds (not tested, not always set)."""
        if node is None or _ekey(node) in ctx.guards:
            return False
        if isinstance(node, nodes.Name):
            return node.name not in self.bound and node.name not in ALWAYS_DEFINED
        if isinstance(node, nodes.Getattr):
            # `loop.*` and the namespaces template lowering adds (`mtok_h1.v`) are always set
            return node.attr not in _PRESENT_ATTRS and not (
                isinstance(node.node, nodes.Name)
                and (node.node.name == "loop" or node.node.name.startswith("mtok_")))
        return False


def _value(ctx: Ctx) -> Ctx:
    """The context of an operand whose value (not only its truthiness) is used."""
    return ctx._replace(boolean=False, in_boolop=False)


class Walker:
    """Walks a template's AST once: records a :class:`Visit` per node and registers the tokens
    of each node with ``positions``.  ``anchor(node, key)`` is then the registration of the
    token ``key`` that ``node`` introduced (its keyword, operator, name or literal)."""

    def __init__(self, positions: NodePositions, ast: nodes.Template) -> None:
        self.positions = positions
        self.ast = ast
        self.visits: list[Visit] = []
        self._anchors: dict[int, dict[tuple, int]] = {}

    def run(self) -> None:
        self._walk(self.ast, Ctx())
        self.positions.resolve()

    def anchor(self, node: nodes.Node, key: tuple) -> int:
        return self._anchors[id(node)][key]

    def _reg(self, node: nodes.Node, key: tuple) -> int:
        reg = self.positions.register(node, key)
        self._anchors.setdefault(id(node), {}).setdefault(key, reg)
        return reg

    def _walk(self, node: nodes.Node | None, ctx: Ctx,
              visit: Callable[[nodes.Node, Ctx], None] | None = None) -> None:
        if node is None:
            return
        start = self.positions.mark()
        self.visits.append(Visit(node, ctx))
        if visit is None:
            visit = getattr(self, "_v_" + type(node).__name__, None)
        if visit is None and type(node) in UNPARSED_OPERATORS:
            visit = self._v_arith
        if visit is not None:
            visit(node, ctx)
        else:
            for child in node.iter_child_nodes():
                self._walk(child, _value(ctx))
        self.positions.spans[id(node)] = (start, self.positions.mark())

    def _walk_all(self, items: Iterable[nodes.Node], ctx: Ctx) -> None:
        for item in items:
            self._walk(item, ctx)

    # statements
    def _v_Template(self, node: nodes.Template, ctx: Ctx) -> None:
        self._walk_all(node.body, ctx)

    def _v_Output(self, node: nodes.Output, ctx: Ctx) -> None:
        for child in node.nodes:
            if not isinstance(child, nodes.TemplateData):
                self._walk(child, Ctx(guards=ctx.guards))

    def _v_For(self, node: nodes.For, ctx: Ctx) -> None:
        self._reg(node, ("tag", "for"))
        body_ctx = Ctx(guards=ctx.guards)
        self._walk(node.target, body_ctx)
        self._walk(node.iter, body_ctx)
        if node.test is not None:
            self._reg(node, ("kw", "if"))
            self._walk(node.test, body_ctx._replace(boolean=True))
        self._walk_all(node.body, body_ctx)
        if node.else_:
            self._reg(node, ("tag", "for-else"))
            self._walk_all(node.else_, body_ctx)

    def _v_If(self, node: nodes.If, ctx: Ctx, tag: str = "if") -> None:
        self._reg(node, ("tag", tag))
        self._walk(node.test, Ctx(boolean=True, guards=ctx.guards))
        self._walk_all(node.body, ctx._replace(guards=ctx.guards | guards(node.test)))
        negated = ctx.guards | neg_guards(node.test)
        for elif_ in node.elif_:
            self._walk(elif_, ctx._replace(guards=negated),
                       lambda n, c: self._v_If(n, c, tag="elif"))
            negated |= neg_guards(elif_.test)
        self._walk_all(node.else_, ctx._replace(guards=negated))

    def _v_Assign(self, node: nodes.Assign, ctx: Ctx) -> None:
        self._reg(node, ("tag", "set"))
        self._walk(node.target, Ctx(guards=ctx.guards))
        self._walk(node.node, Ctx(guards=ctx.guards))

    def _v_AssignBlock(self, node: nodes.AssignBlock, ctx: Ctx) -> None:
        self._reg(node, ("tag", "set"))
        self._walk(node.target, ctx)
        if node.filter is not None:
            self._walk_filter_chain(node.filter, innermost_pipe=True)
        self._walk_all(node.body, ctx)

    def _v_Macro(self, node: nodes.Macro, ctx: Ctx) -> None:
        self._reg(node, ("tag", "macro"))
        self._walk_params(node.args, node.defaults)
        self._walk_all(node.body, Ctx())

    def _walk_params(self, args: list, defaults: list) -> None:
        first_default = len(args) - len(defaults)
        for i, arg in enumerate(args):
            self._walk(arg, Ctx())
            if i >= first_default:
                self._walk(defaults[i - first_default], Ctx())

    def _v_CallBlock(self, node: nodes.CallBlock, ctx: Ctx) -> None:
        self._reg(node, ("tag", "call"))
        self._walk_params(node.args, node.defaults)
        self._walk(node.call, Ctx())
        self._walk_all(node.body, ctx)

    def _v_FilterBlock(self, node: nodes.FilterBlock, ctx: Ctx) -> None:
        self._reg(node, ("tag", "filter"))
        self._walk_filter_chain(node.filter, innermost_pipe=False)
        self._walk_all(node.body, ctx)

    def _walk_filter_chain(self, f: nodes.Filter, innermost_pipe: bool) -> None:
        """The filters of a filter block or block set: no visits, their names are not checked."""
        if isinstance(f.node, nodes.Filter):
            self._walk_filter_chain(f.node, innermost_pipe)
            self._reg(f, ("op", "|"))
        elif innermost_pipe:
            self._reg(f, ("op", "|"))
        self._walk_all(f.args, Ctx())
        self._walk_all(f.kwargs, Ctx())

    def _v_With(self, node: nodes.With, ctx: Ctx) -> None:
        self._reg(node, ("tag", "with"))
        for target, value in zip(node.targets, node.values):
            self._walk(target, Ctx())
            self._walk(value, Ctx())
        self._walk_all(node.body, ctx)

    def _v_loader_tag(self, node: nodes.Node, ctx: Ctx) -> None:
        self._reg(node, ("tag", LOADER_TAGS[type(node)]))
        self._walk(node.template, Ctx())

    _v_Include = _v_Import = _v_FromImport = _v_Extends = _v_loader_tag

    def _v_Block(self, node: nodes.Block, ctx: Ctx) -> None:
        # Without `extends` a block renders in place in jinja2, as the runtime does.
        self._reg(node, ("tag", "block"))
        self._walk_all(node.body, ctx)

    def _v_ScopedEvalContextModifier(self, node, ctx: Ctx) -> None:
        self._reg(node, ("tag", "autoescape"))
        for kw in node.options:
            self._walk(kw.value, Ctx())
        self._walk_all(node.body, ctx)

    _v_EvalContextModifier = _v_ScopedEvalContextModifier

    def _v_Break(self, node, ctx: Ctx) -> None:
        self._reg(node, ("tag", "break"))

    def _v_Continue(self, node, ctx: Ctx) -> None:
        self._reg(node, ("tag", "continue"))

    # expressions
    def _v_Name(self, node: nodes.Name, ctx: Ctx) -> None:
        self._reg(node, ("ident", node.name))

    def _v_NSRef(self, node: nodes.NSRef, ctx: Ctx) -> None:
        self._reg(node, ("ident", node.name))
        self._reg(node, ("op", "."))

    def _v_Keyword(self, node: nodes.Keyword, ctx: Ctx) -> None:
        self._reg(node, ("ident", node.key))
        self._walk(node.value, _value(ctx))

    def _v_Const(self, node: nodes.Const, ctx: Ctx) -> None:
        self._reg(node, ("const",))

    def _v_Getattr(self, node: nodes.Getattr, ctx: Ctx) -> None:
        self._walk(node.node, _value(ctx)._replace(literal=ctx.literal))
        self._reg(node, ("op", "."))

    def _v_Getitem(self, node: nodes.Getitem, ctx: Ctx) -> None:
        self._walk(node.node, _value(ctx)._replace(literal=ctx.literal))
        self._reg(node, ("op", "["))
        self._walk(node.arg, _value(ctx)._replace(literal=ctx.literal))

    def _walk_arguments(self, node: nodes.Call | nodes.Filter, ctx: Ctx) -> None:
        args_ctx = Ctx(literal=ctx.literal, guards=ctx.guards)
        self._walk_all(node.args, args_ctx)
        self._walk_all(node.kwargs, args_ctx)
        self._walk(node.dyn_args, args_ctx)
        self._walk(node.dyn_kwargs, args_ctx)

    def _v_Call(self, node: nodes.Call, ctx: Ctx) -> None:
        self._walk(node.node, _value(ctx)._replace(literal=ctx.literal))
        self._walk_arguments(node, ctx)

    def _v_Filter(self, node: nodes.Filter, ctx: Ctx) -> None:
        self._walk(node.node, _value(ctx)._replace(literal=ctx.literal))
        self._reg(node, ("op", "|"))
        self._walk_arguments(node, ctx)

    def _v_Test(self, node: nodes.Test, ctx: Ctx) -> None:
        self._walk(node.node, _value(ctx)._replace(literal=ctx.literal))
        self._reg(node, ("kw", "is"))
        self._walk_all(node.args, Ctx(literal=ctx.literal))
        self._walk_all(node.kwargs, Ctx(literal=ctx.literal))

    def _v_CondExpr(self, node: nodes.CondExpr, ctx: Ctx) -> None:
        branch = ctx._replace(in_boolop=False)
        self._walk(node.expr1, branch._replace(guards=ctx.guards | guards(node.test)))
        self._reg(node, ("kw", "if"))
        self._walk(node.test, Ctx(boolean=True, literal=ctx.literal, guards=ctx.guards))
        if node.expr2 is not None:
            self._walk(node.expr2, branch._replace(guards=ctx.guards | neg_guards(node.test)))

    def _v_boolop(self, node: nodes.And | nodes.Or, ctx: Ctx) -> None:
        op = "and" if isinstance(node, nodes.And) else "or"
        # the outermost and/or whose value is used is reported; its operands are not again
        inner = ctx._replace(in_boolop=ctx.in_boolop or not ctx.boolean)
        self._walk(node.left, inner)
        self._reg(node, ("kw", op))
        right_guards = guards(node.left) if op == "and" else neg_guards(node.left)
        self._walk(node.right, inner._replace(guards=ctx.guards | right_guards))

    _v_And = _v_Or = _v_boolop

    def _v_Not(self, node: nodes.Not, ctx: Ctx) -> None:
        self._walk(node.node, ctx._replace(boolean=True, in_boolop=False))

    def _v_Compare(self, node: nodes.Compare, ctx: Ctx) -> None:
        value = _value(ctx)
        self._walk(node.expr, value)
        for op in node.ops:
            self._walk(op.expr, value)

    def _v_arith(self, node: nodes.BinExpr, ctx: Ctx) -> None:
        value = _value(ctx)
        self._walk(node.left, value)
        self._reg(node, ("op", UNPARSED_OPERATORS[type(node)]))
        self._walk(node.right, value)

    def _v_List(self, node: nodes.List, ctx: Ctx) -> None:
        self._reg(node, ("op", "["))
        self._walk_all(node.items, Ctx(literal=True, guards=ctx.guards))

    def _v_Dict(self, node: nodes.Dict, ctx: Ctx) -> None:
        self._reg(node, ("op", "{"))
        for pair in node.items:
            self._walk(pair.key, Ctx(literal=True, guards=ctx.guards))
            self._walk(pair.value, Ctx(literal=True, guards=ctx.guards))

    def _v_Tuple(self, node: nodes.Tuple, ctx: Ctx) -> None:
        self._walk_all(node.items, _value(ctx))
