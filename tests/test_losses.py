"""The loss registry (`losses.py`): every code the package emits is registered, and a loss's
trigger finds the spans of text it reaches."""

from __future__ import annotations

import re
from pathlib import Path

from mtok_export import losses as L
from mtok_export.losses import KINDS, Loss

REPO = Path(__file__).resolve().parents[1]


def test_every_emitted_code_is_registered():
    """No free-string codes: every `L.X` the package names is a registered kind."""
    names = set()
    for p in (REPO / "mtok_export").rglob("*.py"):
        names |= set(re.findall(r"\bL\.([A-Z][A-Z0-9_]+)\b", p.read_text(encoding="utf-8")))
    missing = [n for n in names if not isinstance(getattr(L, n, None), L.LossKind)]
    assert not missing
    assert len(KINDS) >= 40


def test_triggers_find_the_spans():
    loss = Loss(L.REGEX_CONTROL, "pre", "$", "r")
    assert loss.spans("a\x03b") == [(1, 2)] and loss.spans("abc") == []
    split = Loss(L.REGEX_UNSUPPORTED, "pre", "$", "r", pattern=r"[!-/]+")
    assert split.spans("a${b") == [(1, 2)]  # `$` (0x24) is inside !-/ ; `{` (0x7b) is not
    tok = Loss(L.ADDED_STRIP_ASCII, "t", "$", "r", trigger=("<x>",))
    assert tok.spans("a\u3000<x>b") == [(1, 5)] and tok.spans("a <x>b") == []




def test_literal_spans_are_each_needles_non_overlapping_occurrences():
    """`Loss.spans` of a loss with its own trigger strings: what `re.finditer` of each escaped needle
    gives, in the needles' order, both for a few needles (found one by one) and for thousands (a
    tekken file's specials, a SentencePiece model's user pieces: looked up by length in a set)."""
    import random

    rnd = random.Random(7)
    for n in (1, 3, 9, 40):
        for _ in range(400):
            needles = tuple("".join(rnd.choice("ab<>") for _ in range(rnd.randint(0, 4))) for _ in range(n))
            text = "".join(rnd.choice("ab<>x") for _ in range(rnd.randint(0, 20)))
            want = [(m.start(), m.end()) for t in needles if t for m in re.finditer(re.escape(t), text)]
            assert L.literal_spans(needles, text) == want, (needles, text)
    specials = tuple(f"<SPECIAL_{i}>" for i in range(1000))
    loss = Loss(L.TEKKEN_SPECIAL_TEXT, "reader", "$.special_tokens", "r", trigger=specials)
    # needle by needle: <SPECIAL_1> (the second needle) before <SPECIAL_12>
    assert loss.spans("a<SPECIAL_12><SPECIAL_1>b<SPECIAL_12>") == [(13, 24), (1, 13), (25, 37)]
    assert loss.spans("<SPECIAL_1000>") == []
    assert loss.spans("no special here") == []
