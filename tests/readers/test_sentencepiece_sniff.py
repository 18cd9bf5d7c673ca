"""`readers.sentencepiece.is_sentencepiece` (the content check that classifies SentencePiece models)
caches its answer by the file's bytes: a hit is the parse's answer, a broken entry is recomputed,
other bytes are another entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtok_export.readers import sentencepiece as S

MODEL = Path(__file__).resolve().parents[2] / "samples" / "llama-spm" / "tokenizer.model"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "is-sentencepiece"


def test_hits_are_the_parse_answers(tmp_path, cache_dir, monkeypatch):
    model = tmp_path / "a.model"
    model.write_bytes(MODEL.read_bytes())
    bogus = tmp_path / "b.model"
    bogus.write_bytes(b"\x0a\x05hello" + b"\xff" * 20)  # field 1 first, then not a ModelProto
    cut = tmp_path / "c.model"
    cut.write_bytes(MODEL.read_bytes()[:1000])  # truncated inside a piece
    answers = [S.is_sentencepiece(p) for p in (model, bogus, cut)]
    assert answers == [True, False, False]
    assert len(list(cache_dir.glob("*.json"))) == 3
    monkeypatch.setattr(S, "_parses", lambda *a: pytest.fail("parsed on a warm cache"))
    assert [S.is_sentencepiece(p) for p in (model, bogus, cut)] == answers
    assert S.is_sentencepiece(tmp_path / "missing.model") is False  # unreadable: no entry needed
    not_proto = tmp_path / "d.json"
    not_proto.write_text("{}")
    assert S.is_sentencepiece(not_proto) is False
    assert len(list(cache_dir.glob("*.json"))) == 3


def test_a_broken_entry_is_recomputed_and_other_bytes_are_another_entry(tmp_path, cache_dir):
    model = tmp_path / "a.model"
    model.write_bytes(MODEL.read_bytes())
    assert S.is_sentencepiece(model)
    (entry,) = cache_dir.glob("*.json")
    for bad in ("{", "1", '"true"', "null"):
        entry.write_text(bad)
        assert S.is_sentencepiece(model) is True
        assert entry.read_text() == "true"
    model.write_bytes(MODEL.read_bytes()[:-7])  # truncated: another key, parsed again
    assert S.is_sentencepiece(model) is False
    assert len(list(cache_dir.glob("*.json"))) == 2
