"""`ir/tokenizer.py`: what the IR promises about the values it only carries.  `Metadata.differences`
holds the reader's `losses.Loss` objects, which the IR cannot import (it sits below `losses`): the
`Difference` protocol says what they are, and these tests hold `Loss` and the readers to it."""

from __future__ import annotations

import typing

import pytest

from mtok_export import losses as L
from mtok_export.ir import Metadata
from mtok_export.ir.tokenizer import Difference
from mtok_export.readers.sentencepiece import read_sentencepiece

from conftest import CORPUS


def test_metadata_declares_differences_as_the_protocol():
    assert typing.get_type_hints(Metadata)["differences"] == tuple[Difference, ...]


def test_a_loss_is_a_difference():
    loss = L.Loss(L.SP_CONTROL_TEXT, "reader", "$.added_tokens", "split out", trigger=("<s>",))
    assert isinstance(loss, Difference)
    assert (loss.code, loss.json_path, loss.reason, loss.spans("a<s>")) == ("sp-control-text", "$.added_tokens",
                                                                           "split out", [(1, 4)])


@pytest.mark.parametrize("wrong", [
    ("sp-control-text", "split out", ("<s>",)),  # the (code, reason, triggers) tuple the annotation claimed
    L.SP_CONTROL_TEXT,  # a kind is not a recorded difference: no path, no reason, no spans
    "sp-control-text",
])
def test_what_is_not_a_difference(wrong):
    assert not isinstance(wrong, Difference)


def test_a_reader_records_differences():
    model = CORPUS / "sp-test-models/test_model.model"
    if not model.is_file():
        pytest.skip("shared corpus not found next to the repository")
    diffs = read_sentencepiece(model).meta.differences
    assert diffs and all(isinstance(d, Difference) and isinstance(d, L.Loss) for d in diffs)
