"""What MNN's Jinja engine (``jinja.hpp``) supports: its filters, tests, methods, functions and
loop attributes (spec sections 8.4-8.7).  The linter reports what lies outside; the lowering
rewrites it into what lies inside.
"""

from __future__ import annotations

from jinja2 import nodes

SUPPORTED_FILTERS = frozenset(
    {"tojson", "string", "capitalize", "lower", "upper", "trim", "length", "items", "map"})
SUPPORTED_TESTS = frozenset({"defined", "undefined", "none", "boolean", "string", "number",
                             "sequence", "iterable", "mapping", "true", "false"})
SUPPORTED_METHODS = frozenset({"startswith", "endswith", "split", "lstrip", "rstrip", "strip",
                               "replace"})
DICT_METHODS = frozenset({"items", "keys", "values", "get", "update", "pop", "popitem",
                          "setdefault", "copy", "clear", "fromkeys"})
STRING_METHODS = frozenset({
    "upper", "lower", "title", "capitalize", "casefold", "swapcase", "format", "format_map", "join",
    "count", "find", "rfind", "index", "rindex", "splitlines", "rsplit", "partition", "rpartition",
    "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "isnumeric",
    "isdecimal", "isidentifier", "isprintable", "isascii", "zfill", "center", "ljust", "rjust",
    "expandtabs", "encode", "removeprefix", "removesuffix", "translate"})
LOOP_ATTRS = frozenset({"index", "index0", "first", "last", "length"})
FUNCTIONS = frozenset({"range", "namespace", "strftime_now"})
# Context variables the runtime always sets (spec 8.7); bos_token only when non-empty.
ALWAYS_DEFINED = frozenset({"messages", "eos_token"})
# String escapes the runtime's lexer knows, and what the ones that are not the character itself
# become.
ESCAPES = frozenset("nrt\\\"'bf")
RUNTIME_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
# Binary operators the runtime's parser does not know, by jinja2 node type.
UNPARSED_OPERATORS = {nodes.Mul: "*", nodes.Div: "/", nodes.FloorDiv: "//", nodes.Mod: "%",
                      nodes.Pow: "**"}


def chainable(node: nodes.Node) -> bool:
    """Whether the runtime accepts ``.x``/``[..]``/``.m()`` after ``node`` (not after a literal
    or a parenthesised expression)."""
    return isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem, nodes.Call))
