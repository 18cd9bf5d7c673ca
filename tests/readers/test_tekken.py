"""Mistral tekken.json (`readers/tekken.py`) against mistral_common's own Tekkenizer, on the two
tekken files the `mistral_common` package ships (installed by the `test` extra), and one test
per malformed-file error on tiny hand-made files."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from mtok_export.errors import InputError
from mtok_export.formats import classify, read_source
from mtok_export.readers.tekken import read_tekken
from mtok_export.corpus import builtin_corpus
from mtok_export.verify.reference_tiktoken import hf_from_ir

from tests.support.installed import import_installed


@pytest.fixture(scope="module")
def mistral_common():
    return import_installed("mistral_common")


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["tekken_240718.json", "tekken_240911.json"])
def test_ids_equal_mistral_common(mistral_common, name):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = Path(mistral_common.__file__).parent / "data" / name
    assert classify(path).name == "tekken"
    tok = read_source(path)
    ref = Tekkenizer.from_file(path)
    hf = hf_from_ir(tok)
    specials = [t.content for t in tok.added_tokens]
    assert specials[:3] == ["<unk>", "<s>", "</s>"] and len(specials) == ref.num_special_tokens == 1000
    texts = [s.text for s in builtin_corpus() if not any(x in s.text for x in specials)]
    assert len(texts) > 400
    engine = [hf.encode(t, add_special_tokens=True).ids for t in texts]
    raw = [hf.encode(t, add_special_tokens=False).ids for t in texts]
    assert engine == [ref.encode(t, bos=True, eos=False) for t in texts]
    assert raw == [ref.encode(t, bos=False, eos=False) for t in texts]
    assert tok.stop_ids == (ref.eos_id,)
    assert tok.meta.differences[0].code == "tekken-special-text"


def tiny(**changes) -> dict:
    """256 byte ranks, 'ab' and 'abc', a pattern and 3 special tokens (v7 layout)."""
    vocab = [{"rank": i, "token_bytes": base64.b64encode(bytes([i])).decode(), "token_str": chr(i)}
             for i in range(256)]
    vocab += [{"rank": 256, "token_bytes": base64.b64encode(b"ab").decode(), "token_str": "ab"},
              {"rank": 257, "token_bytes": base64.b64encode(b"abc").decode(), "token_str": "abc"}]
    data = {"config": {"pattern": r"\p{L}+|\s+|.", "num_vocab_tokens": 258, "default_vocab_size": 262,
                       "default_num_special_tokens": 4, "version": "v7"},
            "vocab": vocab,
            "special_tokens": [{"rank": i, "token_str": t, "is_control": True}
                               for i, t in enumerate(["<unk>", "<s>", "</s>"])]}
    for key, value in changes.items():
        target, _, field = key.rpartition(".")
        (data[target] if target else data)[field] = value
    return data


def _file(tmp_path, data) -> Path:
    p = tmp_path / "tekken.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_tiny_file(tmp_path):
    tok = read_tekken(_file(tmp_path, tiny()))
    assert [t.content for t in tok.added_tokens] == ["<unk>", "<s>", "</s>", "<SPECIAL_3>"]
    hf = hf_from_ir(tok)
    assert hf.encode("abc ab", add_special_tokens=True).ids == [1, 4 + 257, 4 + 32, 4 + 256]
    # the special tokens are model tokens too, so the ids are dense and the .mtok can be written
    assert tok.model.vocab["<s>"] == 1 and sorted(tok.model.vocab.values()) == list(range(262))
    from mtok_export.lower import lower
    from mtok_export.mtok import read_mtok, write_mtok
    from mtok_export.targets import DEFAULT, TARGETS
    assert read_mtok(write_mtok(lower(tok, TARGETS[DEFAULT])[0]), "t")[0].model.vocab["<SPECIAL_3>"] == 3


@pytest.mark.parametrize("change, message", [
    ({"config": "x"}, "an object with 'config' and 'vocab'"),
    ({"config.pattern": ""}, r"\$.config.pattern must be the split regex"),
    ({"config.default_num_special_tokens": -1}, "default_num_special_tokens must be a non-negative integer"),
    ({"config.default_vocab_size": 300}, "default_vocab_size 300 needs 296 ranks after 4 special tokens"),
    ({"special_tokens": [{"rank": 1, "token_str": "<s>"}]}, r"\$.special_tokens\[0\]: expected"),
    ({"special_tokens": [{"rank": i, "token_str": "<s>"} for i in range(3)]}, "must be 4 distinct texts"),
])
def test_malformed(tmp_path, change, message):
    with pytest.raises(InputError, match=message):
        read_tekken(_file(tmp_path, tiny(**change)))


def test_malformed_vocab_entries(tmp_path):
    data = tiny()
    data["vocab"][3]["rank"] = 9
    with pytest.raises(InputError, match=r"\$.vocab\[3\]: expected \{rank: 3"):
        read_tekken(_file(tmp_path, data))
    data = tiny()
    data["vocab"][256]["token_bytes"] = "@@"
    with pytest.raises(InputError, match=r"\$.vocab\[256\].token_bytes is not valid base64"):
        read_tekken(_file(tmp_path, data))
    data = tiny()
    data["vocab"][5]["token_bytes"] = base64.b64encode(b"zz").decode()
    with pytest.raises(InputError, match="first 256 ranks must be the single bytes"):
        read_tekken(_file(tmp_path, data))
    (tmp_path / "tekken.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        read_tekken(tmp_path / "tekken.json")
