"""HF's Punctuation as the runtime's Split (`lower.pre_tokenizers.PUNCT`, one class since issue 27): the
class matches what the alternation it replaced matched, under HF's own regex engine on every code
point, and a run of it (Contiguous) as `[...]+` splits as HF's Punctuation does.  The runtime's side
is tests/lower/test_lower.py's punctuation pass.  (HF's Punctuation and Oniguruma's \\p{P} are of
different Unicode versions: U+166D, U+2E43.. differ whichever spelling.)"""

from __future__ import annotations

import random

from tokenizers import Regex
from tokenizers.pre_tokenizers import Punctuation, Split

from mtok_export.lower.pre_tokenizers import PUNCT

ALTERNATION = r"[!-/:-@\[\\\]^_`{-~]|\p{P}"  # the spelling before: a run of it needed (?:...)+
EVERY = [chr(cp) for cp in range(1, 0x110000) if not 0xD800 <= cp <= 0xDFFF and chr(cp) != "a"]


def _pieces(pre, text: str) -> list[str]:
    return [p for p, _ in pre.pre_tokenize_str(text)]


def test_the_class_matches_what_the_alternation_did_on_every_code_point():
    text = "a" + "a".join(EVERY) + "a"
    assert _pieces(Split(Regex(PUNCT), "isolated"), text) == _pieces(Split(Regex(ALTERNATION), "isolated"), text)


def test_a_contiguous_run_is_the_class_repeated():
    rng = random.Random(27)
    alphabet = list("a .,!?-_[]\\^`{}~ ") + ["\u3002", "\u00bf", "\u2014", "\u201c", "\u4e2d", "\u00e9", "$", "+"]
    text = "\n".join("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))) for _ in range(2000))
    assert _pieces(Split(Regex(PUNCT + "+"), "isolated"), text) == _pieces(Punctuation("contiguous"), text)
