"""`mtok inspect` facts checked against independent sources: the HF tokenizer (vocab size, ids of
special tokens), the file itself (sections tile the body), and hand-broken files (warnings)."""

from __future__ import annotations

import json

import pytest

from mtok_export.ir import Tokenizer
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.mtok import read_mtok, write_mtok


def _inspect_json(cli, path) -> dict:
    code, out, err = cli("mtok", "inspect", path, "--json")
    assert code == 0, out + err
    return json.loads(out)


@pytest.mark.runtime
def test_inspect_matches_hf(tokenizer_name, lowered_corpus, tmp_path, cli):
    from tokenizers import Tokenizer as HF

    ex = lowered_corpus[tokenizer_name]
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(ex.data)
    info = _inspect_json(cli, path)
    hf = HF.from_file(str(ex.directory / "tokenizer.json"))
    raw = json.loads((ex.directory / "tokenizer.json").read_bytes())
    # every HF id (vocab + added tokens) is in the written vocab, with the file's own text
    # (HF's id_to_token would show a `normalized` added token in normalized form)
    # (plus, for ignore_merges in its exact form, the marked chain entries and aliases: lower/whole_words.py)
    from mtok_export.ir.models import vocab_of
    from mtok_export.lower.whole_words import CHAIN_MARK
    from mtok_export.mtok.constants import ALIAS_MARK

    marked = sum(1 for t in vocab_of(ex.lowered.model) if t[:1] in (ALIAS_MARK, CHAIN_MARK))
    assert info["model"]["vocab_size"] == hf.get_vocab_size(with_added_tokens=True) + marked
    added = {t["id"]: t["content"] for t in raw["added_tokens"]}
    for entry in info["header"]["special"]:
        assert added[entry["id"]] == entry["text"]
    # sections tile the body exactly: no gap, no overlap, nothing after the last one
    end = info["file"]["header_size"]
    for s in info["sections"]:
        assert s["offset"] == end
        end += s["size"]
    assert end == info["file"]["size"] == len(ex.data)


def test_inspect_reports_unsorted_merges_as_warning(tmp_path, cli):
    data = write_mtok(Tokenizer(model=M.BPE({"a": 0, "b": 1, "ab": 2, "ba": 3}, (("a", "b"), ("b", "a"))),
                                decoder=D.Fuse()))
    first = (0).to_bytes(4, "little") + (1).to_bytes(4, "little") + (0).to_bytes(4, "little")
    i = data.index(first)
    broken = data[:i] + data[i + 12:i + 24] + data[i:i + 12] + data[i + 24:]
    path = tmp_path / "broken.mtok"
    path.write_bytes(broken)
    info = _inspect_json(cli, path)
    assert any("merges not sorted" in w for w in info["warnings"])
    # export-side readers stay strict
    import pytest

    from mtok_export.errors import FormatError
    with pytest.raises(FormatError, match="merges not sorted"):
        read_mtok(broken)


def test_inspect_warns_ids_beyond_vocab(tmp_path, cli):
    tok = Tokenizer(model=M.BPE({"a": 0, "b": 1}), decoder=D.Fuse(), stop_ids=(7,))
    path = tmp_path / "t.mtok"
    path.write_bytes(write_mtok(tok))
    info = _inspect_json(cli, path)
    assert any("stop id(s) [7]" in w for w in info["warnings"])
