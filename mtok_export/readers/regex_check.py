"""Whether the reference engine of a format compiles a split regex: a pattern it rejects is bad
input (exit 2), not something to export, as MNN then encodes every text to `[]`.

HF `tokenizers` compiles tokenizer.json's `{"Regex": ...}` patterns with Oniguruma (`tokenizers.Regex`);
tiktoken compiles its split pattern with its own engine (fancy-regex, behind `tiktoken.Encoding`),
whose error text says nothing, so the `regex` module's (which tiktoken requires) is added when it
fails too.  Python's `re` is neither engine (it rejects `\\p{L}`).

The answers are cached by the patterns and the engine's version, so a warm export imports neither
library."""

# function-local imports: the engines (tokenizers, tiktoken and its regex) load only when an answer is
# not cached, so a warm export loads none (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

from .. import cache
from ..errors import InputError, UnsupportedError

# engine -> (the distribution whose version keys the cache, what the message calls it)
ENGINES = {"oniguruma": ("tokenizers", "HF tokenizers (Oniguruma)"), "tiktoken": ("tiktoken", "tiktoken")}


def rejected(engine: str, patterns) -> dict[str, str]:
    """pattern -> the engine's error, for each of `patterns` the engine cannot compile."""
    patterns = sorted(set(patterns))
    if not patterns:
        return {}
    dist, _ = ENGINES[engine]
    digest = cache.key("regex-rejected", engine, patterns, dists=(dist,))
    return cache.computed("regex-rejected", digest, lambda: _compile_all(engine, patterns),
                           valid=lambda v: isinstance(v, dict) and set(v) <= set(patterns)
                           and all(isinstance(e, str) for e in v.values()))


def _compile_all(engine: str, patterns) -> dict[str, str]:
    compile_one = _oniguruma if engine == "oniguruma" else _tiktoken
    return {p: err for p in patterns if (err := compile_one(p)) is not None}


def _oniguruma(pattern: str) -> str | None:
    import tokenizers

    try:
        tokenizers.Regex(pattern)
    except Exception as e:  # tokenizers raises a bare Exception("Oniguruma error: ...")
        return str(e)
    return None


def _tiktoken(pattern: str) -> str | None:
    import tiktoken

    try:
        tiktoken.Encoding(name="regex-check", pat_str=pattern, mergeable_ranks={b"a": 0}, special_tokens={})
    except ValueError as e:
        import regex

        try:
            regex.compile(pattern)
        except regex.error as detail:
            return f"{e} (the regex module: {detail})"
        return str(e)
    return None


def check_json_patterns(found, path: str) -> None:
    """Raise at the first (JSON path, pattern) of `found` that HF tokenizers cannot compile."""
    bad = rejected("oniguruma", (p for _, p in found))
    for jp, pattern in found:
        if pattern in bad:
            raise UnsupportedError(f"regex {pattern!r:.120} does not compile in {ENGINES['oniguruma'][1]}, the "
                                   f"reference: {bad[pattern]}", json_path=jp, path=path)


def check_tiktoken_pattern(pattern: str, source: str) -> None:
    """Raise when tiktoken cannot compile the split `pattern` found in `source`."""
    bad = rejected("tiktoken", [pattern])
    if bad:
        raise InputError(f"{source}: split regex {pattern!r:.120} does not compile in tiktoken, the reference: "
                         f"{bad[pattern]}")
