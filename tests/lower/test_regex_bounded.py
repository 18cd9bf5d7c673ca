"""`--regex-form bounded` (`lower/regex.bounded`, issue 34): a split regex that runs on std::wregex,
whose libstdc++ matcher recurses once per character, with every repetition capped, so no match can
crash the runtime; exact wherever no repeated item runs over the cap.  Checked against HF's own
Split (Oniguruma) and on the real MNN 3.6.1 runtime, with the explicit form as the control that
does crash."""

from __future__ import annotations

import random

import pytest
from tokenizers import Regex, pre_tokenizers as hf_pre

from mtok_export import losses as L
from mtok_export.lower import Forms
from mtok_export.lower.regex import BOUND, bounded
from mtok_export.readers.tiktoken import _O200K_PATTERN
from mtok_export.verify.runtime import RobustRequest, run_runtime
from tests.lower.test_regex import CJK, TEXTS, needs_corpus
from tests.support.gpt2_patterns import gpt2_with
from tests.support.marks import needs_mnn

DEEPSEEK_CJK = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"


@pytest.mark.parametrize("pattern, capped", [
    ("[a-z]+", "[a-z]{1,256}"),
    ("a*b+?c{2,}d{3}e{1,5}f?", "a{0,256}b{1,256}?c{2,256}d{3}e{1,5}f?"),
    (r"(?:ab|c+)+\s+(?!\S)", r"(?:ab|c{1,256}){1,256}\s{1,256}(?!\S)"),
    (r"(?!x+)y", r"(?!x{1,256})y"),  # lookaheads recurse too
    (r"[+*]\+\*x", None),  # escaped and class members are no quantifiers: nothing to cap
    (r"a++", None),  # possessive: `{1,256}+` would repeat the repetition in Oniguruma
])
def test_bounded_caps_every_unbounded_repetition(pattern, capped):
    assert bounded(pattern) == capped


def _pieces(pattern: str, text: str) -> list[str]:
    split = hf_pre.Split(Regex(pattern), "isolated")  # a str would be a literal String pattern
    return [p for p, _ in split.pre_tokenize_str(text)]


def _texts(seed: int, alphabet: str, longest: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) * rng.randint(1, longest) for _ in range(rng.randint(1, 12)))
            for _ in range(300)]


# Letters of every case class o200k tells apart, CJK, kana, digits, marks, spaces, newlines, punctuation.
ALPHABET = "aZéÉǅʰ中文ぁァ0٣\u0301 \n\t!'s"


@pytest.mark.parametrize("pattern", [DEEPSEEK_CJK, _O200K_PATTERN, r"\s+(?!\S)|\s+", CJK])
def test_bounded_is_exact_where_no_run_is_longer_than_the_cap(pattern):
    """HF's own Split (Oniguruma) on the source pattern and on its capped form: the same pieces on
    every text whose runs are at most the cap, and different ones once a run is
    longer (the cap is not a no-op).  At most 12 runs of at most 20: no run of one class passes 240."""
    capped = bounded(pattern)
    for text in _texts(0, ALPHABET, 20) + TEXTS:
        assert _pieces(capped, text) == _pieces(pattern, text), text
    long_run = {DEEPSEEK_CJK: "\u4e2d", CJK: "\u4e2d", r"\s+(?!\S)|\s+": " "}.get(pattern, "a")
    text = "x " + long_run * (BOUND + 44) + " y"
    assert _pieces(capped, text) != _pieces(pattern, text)


def _crash_run(path, text: str):
    return run_runtime(path, robust=RobustRequest([text], ["one"], seconds=60.0, stack=256 * 1024)).robust


@needs_corpus
@needs_mnn
@pytest.mark.runtime
@pytest.mark.parametrize("pattern, unit", [(DEEPSEEK_CJK, "\u4e2d"), (_O200K_PATTERN, "\u00e9")],
                         ids=["deepseek-cjk", "o200k"])
def test_bounded_does_not_crash_where_the_exact_form_does(tmp_path, pattern, unit):
    """One run of 20,000 characters on a 256 KiB thread stack: the exact form (std::wregex, one
    frame per character) kills the runtime; the bounded form encodes it, with the ids HF gives on
    the loss's patch (the same cut in the source)."""
    text = unit * 20_000
    (tmp_path / "exact").mkdir()
    (tmp_path / "bounded").mkdir()
    _, exact, lw = gpt2_with(tmp_path / "exact", [pattern])
    assert lw.wregex == [pattern]  # the exact file runs it on std::wregex, uncapped
    assert _crash_run(exact, text).crashed == 0
    hf, path, lw = gpt2_with(tmp_path / "bounded", [pattern], Forms(regex_form="bounded"))
    (loss,) = [x for x in lw.losses if x.kind is L.REGEX_BOUND]
    assert lw.wregex == [] and not any(x.kind is L.REGEX_STACK for x in lw.losses)
    run = _crash_run(path, text)
    assert run.crashed is None and run.results[0]["ids"]
    assert max(map(len, _pieces(loss.patch[1].pattern.value, text))) <= BOUND < len(text)


@needs_corpus
@needs_mnn
@pytest.mark.runtime
@pytest.mark.parametrize("pattern", [DEEPSEEK_CJK, _O200K_PATTERN], ids=["deepseek-cjk", "o200k"])
def test_bounded_ids_on_the_runtime(tmp_path, pattern):
    """Runtime ids of the bounded file: equal to HF on the source wherever no run passes the cap,
    and on a longer run equal to HF on the source patched as the loss says (the projection)."""
    import json

    from tokenizers import Tokenizer

    hf, path, lw = gpt2_with(tmp_path, [pattern], Forms(regex_form="bounded"))
    (loss,) = [x for x in lw.losses if x.kind is L.REGEX_BOUND]
    short = TEXTS + _texts(1, ALPHABET, 20)[:60]
    long = ["x \u4e2d" * 3 + "\u4e2d" * (BOUND + 30) + " y", "Hello " + "\u00e9" * (BOUND + 30) + " World"]
    got = run_runtime(path, texts=short + long).encodes
    assert [g for t, g in zip(short, got)] == [hf.encode(t, add_special_tokens=False).ids for t in short]
    tj = json.loads((tmp_path / "src/tokenizer.json").read_text(encoding="utf-8"))
    tj["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": loss.patch[1].pattern.value}
    patched = Tokenizer.from_str(json.dumps(tj))
    assert got[len(short):] == [patched.encode(t, add_special_tokens=False).ids for t in long]
