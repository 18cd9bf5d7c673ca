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


