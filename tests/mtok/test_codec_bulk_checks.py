"""A lazy read checks the vocab and merges on whole arrays and re-reads entry by entry only when a
check fails (a full read always goes entry by entry).  These properties hold the two paths to one answer: on random tables, valid or broken
in every way the format can be (unsorted, duplicate tokens or ids, ids or ranks out of range,
invalid UTF-8, NULs inside tokens, truncation), the bulk reader returns what the entry-by-entry
reader returns, or fails with the same message at the same offset, strict and lenient alike."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st
import pytest

from mtok_export.errors import FormatError
from mtok_export.ir import models as M
from mtok_export.mtok.codec import _read_merge_entries, _read_merges, _read_vocab, _read_vocab_entries
from mtok_export.mtok.primitives import Reader
from mtok_export.unicode.tables import u32_array

PREFIX = b"\xaa" * 3  # the table never starts at offset 0 in a file

token = st.one_of(st.sampled_from([b"", b"a", b"ab", b"b", b"\x00", b"a\x00", b"\xff", b"\xc3", b"\xc3\xa9",
                                   b"\xed\xa0\x80", "中".encode()]),
                  st.binary(max_size=4))


@st.composite
def vocab_tables(draw):
    scored = draw(st.booleans())
    toks = draw(st.lists(token, max_size=8))
    if draw(st.booleans()):  # mostly valid tables, so the bulk path gets to run its later checks
        toks = sorted(set(toks))
    n = len(toks)
    ids = draw(st.permutations(range(n)))
    if n and draw(st.booleans()):  # one id repeated or out of range
        ids[draw(st.integers(0, n - 1))] = draw(st.integers(0, n + 1))
    body = b"".join(struct.pack("<H", len(t)) + t + struct.pack("<I", i)
                    + (struct.pack("<d", draw(st.floats(allow_nan=False))) if scored else b"")
                    for t, i in zip(toks, ids))
    cut = draw(st.one_of(st.just(len(body)), st.integers(0, len(body))))
    return n, scored, body[:cut] + draw(st.binary(max_size=3))


def outcome(fn, data: bytes, strict: bool, *args):
    r = Reader(data, len(PREFIX))
    r.strict, r.lazy = strict, True  # lazy: the whole-array checks run (a full read goes entry by entry)
    warnings: list[str] = []
    r.warn = warnings.append
    try:
        value = fn(r, *args)
        if fn.__name__.startswith("_read_vocab"):  # the bulk read's tokens are a view: compare them as a list
            value = (list(value[0]), value[1])
        return ("ok", value, r.pos, warnings)
    except FormatError as e:
        return ("error", e.message, e.offset, warnings)


@pytest.mark.runtime
@settings(max_examples=400, deadline=None)
@given(vocab_tables(), st.booleans())
def test_bulk_vocab_reader_agrees_with_entry_reader(table, strict):
    n, scored, body = table
    data = PREFIX + body
    fast = outcome(_read_vocab, data, strict, n, scored)
    slow = outcome(_read_vocab_entries, data, strict, n, scored)
    assert fast == slow


@st.composite
def merge_tables(draw):
    size = draw(st.integers(1, 6))
    n = draw(st.integers(0, 8))
    pairs = draw(st.lists(st.tuples(st.integers(0, size), st.integers(0, size)), min_size=n, max_size=n))
    if draw(st.booleans()):
        pairs.sort()
    ranks = draw(st.permutations(range(n)))
    if n and draw(st.booleans()):  # one rank repeated or out of range
        ranks[draw(st.integers(0, n - 1))] = draw(st.integers(0, n))
    body = b"".join(struct.pack("<3I", a, b, k) for (a, b), k in zip(pairs, ranks))
    return size, n, body


def _entries(r: Reader, n: int, tokens: list[str]):
    start = r.need(12 * n, f"{n} merges")
    return _read_merge_entries(r, start, u32_array(r.buf[start:start + 12 * n]), n, tokens)


@pytest.mark.runtime
@settings(max_examples=400, deadline=None)
@given(merge_tables(), st.booleans())
def test_bulk_merge_reader_agrees_with_entry_reader(table, strict):
    size, n, body = table
    tokens = [f"t{i}" for i in range(size)]
    data = PREFIX + body
    assert outcome(_read_merges, data, strict, n, tokens) == outcome(_entries, data, strict, n, tokens)


def test_tokens_holding_nul_read_back():
    # the bulk decode joins tokens with NUL; a token holding one must not split
    toks = [b"\x00", b"a", b"a\x00b"]
    data = PREFIX + b"".join(struct.pack("<H", len(t)) + t + struct.pack("<I", i) for i, t in enumerate(toks))
    r = Reader(data, len(PREFIX))
    r.lazy = True
    tokens, scores = _read_vocab(r, 3, False)
    assert list(tokens) == ["\x00", "a", "a\x00b"] and scores is None
    assert [tokens[i] for i in range(3)] == list(tokens) and tokens[1:] == ["a", "a\x00b"]
    assert r.pos == len(data)


def test_valid_files_never_take_the_entry_by_entry_path(tokenizer_name, lowered_corpus, monkeypatch):
    from mtok_export.mtok import codec, read_mtok

    def refuse(*args):
        raise AssertionError("a valid table fell back to the entry-by-entry reader")

    from mtok_export.mtok.constants import ALIAS_MARK

    e = lowered_corpus[tokenizer_name]
    # (piece, score) tuples are built either way; a vocabulary with aliases (ignore_merges in its exact
    # form, lower/whole_words.py) is read entry by entry, where the aliases are checked
    aliased = any(t.startswith(ALIAS_MARK) for t in M.vocab_of(e.lowered.model))
    if not isinstance(e.lowered.model, M.Unigram) and not aliased:
        monkeypatch.setattr(codec, "_read_vocab_entries", refuse)
    monkeypatch.setattr(codec, "_read_merge_entries", refuse)
    assert read_mtok(e.data, lazy=True)[0] == e.lowered


# ---------------------------------------------------------------- lazy reads (inspect, check_written)

@pytest.mark.runtime
def test_lazy_read_equals_full_read(tokenizer_name, lowered_corpus):
    from mtok_export.dump.jsonify import describe, section
    from mtok_export.mtok import read_mtok

    data = lowered_corpus[tokenizer_name].data
    full, full_layout = read_mtok(data)
    lazy, lazy_layout = read_mtok(data, lazy=True)
    assert lazy == full and full == lazy
    assert list(M.vocab_of(lazy.model).items()) == list(M.vocab_of(full.model).items())  # id order kept
    assert describe(lazy, lazy_layout) == describe(full, full_layout)
    for name in ("vocab", "merges", "header"):
        assert section(lazy, lazy_layout, name) == section(full, full_layout, name)


def test_views_behave_as_dict_and_tuple():
    from mtok_export.mtok.views import IdVocab, RankedMerges

    v = IdVocab(["a", "b", "ab"])
    assert v == {"ab": 2, "a": 0, "b": 1} and v != {"a": 0}
    assert v["ab"] == 2 and "b" in v and "c" not in v and v.get("c") is None and len(v) == 3
    assert list(v.items()) == [("a", 0), ("b", 1), ("ab", 2)] and list(v.values()) == [0, 1, 2]
    # the file holds merges in key order, each with its rank
    m = RankedMerges(["a", "b", "ab"], [0, 1], [1, 0], [1, 0])
    assert m == (("b", "a"), ("a", "b")) and m[-1] == ("a", "b") and m[:1] == (("b", "a"),) and len(m) == 2
    assert m != (("b", "a"),)
