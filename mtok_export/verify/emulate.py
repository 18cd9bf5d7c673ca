"""Python models of what the runtime does with a lowered file where that differs from HF: its
normalizers (spec 2.3) and its single-id decode (spec 3.7).  Verify uses them as the projections
of the normalizer and decoder losses: a mismatch is explained when the model reproduces it."""

from __future__ import annotations

import heapq
import re
import unicodedata

from ..ir import decoders as D
from ..ir import normalizers as N
from ..ir.byte_level import BYTE_CHARS, token_to_bytes
from ..ir.walk import members
from ..mtok.constants import TABLE_CONTROL_TO_SPACE as _CONTROL


def normalize(n, text: str) -> str:
    if n is None:
        return text
    if isinstance(n, N.Sequence):
        for step in _plan(n):
            text = _replace_run(step, text) if isinstance(step, _Run) else normalize(step, text)
        return text
    if isinstance(n, N.Prepend):
        return n.prepend + text if text else text
    if isinstance(n, N.Replace):
        return text.replace(n.pattern.value, n.content) if n.pattern.value else text
    if isinstance(n, N.Strip):
        ws = lambda c: c in " \t\n\r\f\v" or unicodedata.category(c) == "Zs"  # noqa: E731
        i, j = 0, len(text)
        while n.strip_left and i < j and ws(text[i]):
            i += 1
        # MNN 3.6.1 keeps trailing whitespace whatever strip_right says (tests/test_targets.py, the
        # generated zoo's Strip shapes): the `strip-right` loss says so
        return text[i:j]
    if isinstance(n, N.CodepointMap):
        return _table(n.entries, text)
    if isinstance(n, N.MnnBertNormalizer):
        out = []
        for c in text:
            cat = unicodedata.category(c)
            if n.clean_text and (c in "\x00\ufffd" or (cat == "Cc" and c not in "\t\n\r")):
                continue
            if n.clean_text and (c in "\t\n\r" or cat == "Zs"):
                c = " "
            if n.handle_chinese_chars and _cjk(ord(c)):
                out.append(f" {c} ")  # a CJK character is emitted as it is: not decomposed, not stripped
            elif n.strip_accents and n.nfd_table is not None:
                out.append("".join(d for d in _table(n.nfd_table, c, control=False)
                                   if not unicodedata.category(d).startswith("M")))
            else:
                out.append(c)
        text = "".join(out)
        if n.lowercase:
            text = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
        return text
    return text


class _Run(tuple):
    """Consecutive `Replace` steps of a sequence: ((pattern, content), ...) and, per first character
    of a pattern, the indices of the steps whose pattern starts with it."""


_PLANS: dict[int, tuple] = {}


def _plan(n: N.Sequence) -> list:
    """`n`'s steps with each run of `Replace` steps made one `_Run` (a charsmap's rules lower to
    thousands of them, applied to every mismatched sweep string), made once per sequence."""
    hit = _PLANS.get(id(n))
    if hit is None or hit[0] is not n:
        if len(_PLANS) > 16:
            _PLANS.clear()
        plan: list = []
        run: list = []
        for c in (*n.normalizers, None):
            if isinstance(c, N.Replace):
                if c.pattern.value:  # an empty pattern changes nothing
                    run.append((c.pattern.value, c.content))
                continue
            if run:
                first: dict[str, list[int]] = {}
                for i, (pattern, _) in enumerate(run):
                    first.setdefault(pattern[0], []).append(i)
                plan.append(_Run((tuple(run), first)))
                run = []
            if c is not None:
                plan.append(c)
        hit = _PLANS[id(n)] = (n, plan)
    return hit[1]


def _replace_run(run: "_Run", text: str) -> str:
    """The run's replacements in order, as `str.replace` one after another, trying only the steps
    whose pattern's first character is in the text as it is when their turn comes (the original
    text's characters, and those an earlier replacement wrote)."""
    pairs, first = run
    todo = sorted({i for ch in set(text) for i in first.get(ch, ())})
    if not todo:
        return text
    heapq.heapify(todo)
    queued = set(todo)
    while todo:
        i = heapq.heappop(todo)
        pattern, content = pairs[i]
        if pattern in text:
            text = text.replace(pattern, content)
            for ch in set(content):
                for j in first.get(ch, ()):
                    if j > i and j not in queued:
                        queued.add(j)
                        heapq.heappush(todo, j)
    return text


def _table(entries, text: str, control: bool = True) -> str:
    table = _lookup(entries)
    out = []
    for c in text:
        o = ord(c)
        if control and entries and o in _CONTROL:
            out.append(" ")
            continue
        out.append(table.get(o, c))
    return "".join(out)


_TABLES: dict[int, tuple] = {}


def _lookup(entries) -> dict[int, str]:
    """A (sorted) table's entries as a dict, the first entry of a code point winning as a binary
    search finds it; made once per table (attribution normalizes every mismatched sweep string with
    the same one: rebuilding its index per call was most of a Unigram sweep's time)."""
    hit = _TABLES.get(id(entries))
    if hit is None or hit[0] is not entries:
        if len(_TABLES) > 16:
            _TABLES.clear()
        table: dict[int, str] = {}
        for cp, value in entries:
            table.setdefault(cp, value)
        hit = _TABLES[id(entries)] = (entries, table)
    return hit[1]


def _cjk(cp: int) -> bool:
    return any(a <= cp <= b for a, b in ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                                          (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def normalize_around(n, text: str, added: tuple[str, ...]) -> str:
    """The runtime's normalizer applied to `text` as the runtime applies it: to the pieces between
    added-token occurrences (which are split out first and kept as they are), spec 3.7."""
    if n is None or not added:
        return normalize(n, text)
    rx = _added_regex(added)
    out, pos = [], 0
    for m in rx.finditer(text):
        out.append(normalize(n, text[pos:m.start()]) if m.start() > pos else "")
        out.append(m.group())
        pos = m.end()
    out.append(normalize(n, text[pos:]) if pos < len(text) else "")
    return "".join(out)


_ADDED: dict[int, tuple] = {}


def _added_regex(added: tuple[str, ...]):
    """The added tokens' alternation, longest first, made once per tuple (attribution passes the same
    one for every mismatch; sorting thousands of tokens per call was most of a sweep's time)."""
    hit = _ADDED.get(id(added))
    if hit is None or hit[0] is not added:
        if len(_ADDED) > 16:
            _ADDED.clear()
        tokens = sorted({t for t in added if t}, key=lambda t: (-len(t), t))
        hit = _ADDED[id(added)] = (added, re.compile("|".join(re.escape(t) for t in tokens)))
    return hit[1]


def decoder_flags(d) -> tuple[str | None, bool]:
    """(WordPiece prefix or None, byte_level_) of a lowered decoder: what single-id decode looks at."""
    kids = members(d)
    prefix = next((k.prefix for k in kids if isinstance(k, D.WordPiece)), None)
    return prefix, any(isinstance(k, D.ByteLevel) for k in kids)


def decode_id(token: str | None, wordpiece_prefix: str | None, byte_level: bool) -> bytes:
    """What the runtime's `decode(int)` returns for a vocabulary token (spec 3.7): U+2581 becomes a
    space, `<0xHH` anywhere becomes that byte (six characters consumed), then a WordPiece prefix is
    stripped (or a space prepended), else a byte-level token is mapped back to bytes.  An id
    outside the model vocab (`token` None) decodes to nothing."""
    if token is None:
        return b""
    if wordpiece_prefix is not None:
        token = token[len(wordpiece_prefix):] if token.startswith(wordpiece_prefix) else " " + token
    elif byte_level:
        raw = token_to_bytes(token)
        if raw is not None:
            return raw
    # a token with characters outside the byte map under byte_level_ (a ByteLevel decoder over another
    # vocabulary): the runtime maps each character it can ('é' is byte 0xE9), where HF's ByteLevel
    # decoder keeps such a token as it is (the generated zoo's WordLevel + Metaspace + ByteLevel shape)
    mapped = _BYTE_OF if byte_level and wordpiece_prefix is None else {}
    out, i = bytearray(), 0
    while i < len(token):
        if token.startswith("<0x", i) and _HEX.fullmatch(token[i + 3:i + 5]):
            out.append(int(token[i + 3:i + 5], 16))
            i += 6
            continue
        c = token[i]
        if c in mapped:
            out.append(mapped[c])
        else:
            out += (" " if c == "\u2581" else c).encode("utf-8", "surrogatepass")
        i += 1
    return bytes(out)


_HEX = re.compile(r"[0-9A-Fa-f]{2}")
_BYTE_OF = {c: b for b, c in enumerate(BYTE_CHARS)}


def decode_id_type0(token: str | None) -> bytes:
    """The legacy type-0 runtime's `decode(int)` (MNN <= 3.4.1, `legacy.sentencepiece_txt`): the
    piece as it is except that its first U+2581 becomes a space; a six-character `<0xHH>` piece is
    that byte."""
    if token is None:
        return b""
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">") and _HEX.fullmatch(token[3:5]):
        return bytes([int(token[3:5], 16)])
    return token.replace("\u2581", " ", 1).encode("utf-8", "surrogatepass")
