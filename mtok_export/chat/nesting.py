"""How deeply a chat template nests, measured on jinja2's token stream (no parsing).

jinja2's parser and MNN's Jinja engine both descend recursively, one frame per bracket and per
open block, so a template nested thousands deep overflows the Python stack (a RecursionError
traceback) and can crash the engine on the device.  Real templates nest fewer than 20 levels;
readers refuse anything beyond `MAX_DEPTH` before any parser sees it.  The depth is cached by
content (`cache.computed`), so reading a model a second time does not import jinja2 for it."""

from __future__ import annotations

from .. import cache
from ..errors import UnsupportedError
from . import code_files

MAX_DEPTH = 100

# Block tags with an {% end... %}: each open one is a level of the parser's recursion.
_BLOCKS = {"if", "for", "macro", "call", "filter", "with", "block", "generation", "raw", "autoescape"}


def template_depth(text: str) -> int:
    """The largest number of brackets and open blocks at one point of `text` (0 if it does not lex:
    the syntax error is reported by whoever parses it)."""
    import jinja2

    env = jinja2.Environment()
    depth = deepest = 0
    after_block_begin = False
    try:
        for _, kind, value in env.lex(text):
            if kind == "whitespace":
                continue
            if kind == "operator" and value in "([{":
                depth += 1
            elif kind == "operator" and value in ")]}":
                depth -= 1
            elif after_block_begin and kind == "name":
                if value in _BLOCKS:
                    depth += 1
                elif value.startswith("end") and value[3:] in _BLOCKS:
                    depth -= 1
            after_block_begin = kind == "block_begin"
            deepest = max(deepest, depth)
    except jinja2.TemplateSyntaxError:
        return 0
    return deepest


def check_template_depth(text: str, where: str) -> None:
    digest = cache.key("chat-depth", text, files=code_files())
    depth = cache.computed("chat-depth", digest, lambda: template_depth(text), valid=lambda v: type(v) is int)
    if depth > MAX_DEPTH:
        raise UnsupportedError(f"chat template nests {depth} levels deep (limit {MAX_DEPTH}): jinja2 and MNN's "
                               "engine would overflow their stacks", path=where)
