"""How deeply a chat template nests, measured on jinja2's token stream (no parsing).

jinja2's parser and MNN's Jinja engine both descend recursively, one frame per bracket and per
open block, so a template nested thousands deep overflows the Python stack (a RecursionError
traceback) and can crash the engine on the device.  Real templates nest fewer than 20 levels;
readers refuse anything beyond `MAX_DEPTH` before any parser sees it.  The depth is cached by
content (`cache.computed`), so reading a model a second time does not import jinja2 for it."""

from __future__ import annotations

import re

from .. import cache
from ..errors import UnsupportedError
from . import code_files

MAX_DEPTH = 100
# Size: the largest templates known (gpt-oss, Gemma 4) have ~17 KB and ~340 tags; parsing, linting
# and lowering cost ~1.6 ms per tag, so 100k expressions took 17 s.  Both limits are >10x the largest.
MAX_CHARS = 256 * 1024
MAX_TAGS = 4096

# Block tags with an {% end... %}: each open one is a level of the parser's recursion.
_BLOCKS = {"if", "for", "macro", "call", "filter", "with", "block", "generation", "raw", "autoescape"}


def template_depth(text: str) -> int:
    """The largest number of brackets and open blocks at one point of `text` (0 if it does not lex:
    the syntax error is reported by whoever parses it)."""
    import jinja2  # jinja2 (~35 ms): only when the depth is not cached (a warm export loads none)

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


def check_template(text: str, where: str) -> None:
    """`UnsupportedError` (exit 2) for a template too large or too deeply nested to process in
    bounded time and stack."""
    if len(text) > MAX_CHARS:
        raise UnsupportedError(f"chat template has {len(text):,} characters (limit {MAX_CHARS:,})", path=where)
    tags = text.count("{{") + text.count("{%")  # counted without lexing; strings holding "{{" count too
    if tags > MAX_TAGS:
        line, col = _position(text, MAX_TAGS)
        raise UnsupportedError(f"chat template has {tags:,} tags (limit {MAX_TAGS:,}; tag {MAX_TAGS + 1:,} is at "
                               f"{line}:{col})", path=where)
    check_template_depth(text, where)


def _position(text: str, n: int) -> tuple[int, int]:
    """line:column (1-based) of the tag after the first `n` ({{ or {%)."""
    for i, m in enumerate(re.finditer(r"\{[{%]", text)):
        if i == n:
            before = text[:m.start()]
            return before.count("\n") + 1, m.start() - (before.rfind("\n") + 1) + 1
    return 0, 0


def check_template_depth(text: str, where: str) -> None:
    digest = cache.key("chat-depth", text, files=code_files())
    depth = cache.computed("chat-depth", digest, lambda: template_depth(text), valid=lambda v: type(v) is int)
    if depth > MAX_DEPTH:
        raise UnsupportedError(f"chat template nests {depth} levels deep (limit {MAX_DEPTH}): jinja2 and MNN's "
                               "engine would overflow their stacks", path=where)
