"""What every reader finishes with (`readers.finish`): stop ids (first source wins) and the
provenance of the files read."""

from __future__ import annotations

import pytest

from mtok_export.errors import UnsupportedError
from mtok_export.readers.finish import provenance, stop_ids


def test_stop_ids_first_source_wins_in_order(tmp_path):
    ids = {"<eos>": 2, "<|im_end|>": 7, "<|eot_id|>": 9, "<stop>": 5}
    got = stop_ids(ids, (2, "eos_token"), tmp_path, {"eos_token_id": [2, 3]}, {"eos_token_id": 3},
                   extra=(("<stop>", "tekken stop"), ("<absent>", "x")))
    assert list(got.items()) == [(2, "eos_token"), (3, "generation_config.json eos_token_id"),
                                 (5, "tekken stop"), (7, "end-of-turn token <|im_end|>"),
                                 (9, "end-of-turn token <|eot_id|>")]
    assert stop_ids({}, None, tmp_path, {}, {}) == {}


def test_stop_ids_refuses_a_non_integer_eos_id(tmp_path):
    with pytest.raises(UnsupportedError, match="eos_token_id must be an integer"):
        stop_ids({}, None, tmp_path, {"eos_token_id": "2"}, {})


def test_provenance_lists_each_file_once_with_its_hash(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(b"{}")
    b.write_bytes(b"")
    p = provenance([a, b, a])
    assert [f.path for f in p.inputs] == [str(a), str(b)]
    assert p.inputs[1].sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # empty
