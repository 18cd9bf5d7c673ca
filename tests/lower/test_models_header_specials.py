"""Only the chat template's turn mark goes into the header list the runtime scans at every byte
(issues 17, 27); the rest are split by the added-token pass with the same result."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtok_export.lower import Forms, lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.runtime import run_runtime

LLAMA3 = Path(__file__).resolve().parents[2].parent / "shared/corpus/tokenizers/meta-llama-3-8b-instruct"


@pytest.fixture(scope="module")
def llama3():
    if not LLAMA3.is_dir():
        pytest.skip("shared corpus not found next to the repository")
    return read_model_dir(LLAMA3)


@pytest.mark.runtime
def test_header_keeps_the_turn_mark(llama3):
    low, lw = lower(llama3, TARGETS[DEFAULT])
    names = {t.id: t.content for t in low.added_tokens}
    # the template renders <|start_header_id|> and <|end_header_id|> once a turn; the lower id wins
    assert [names[i] for i in low.special_ids] == ["<|start_header_id|>"]
    assert "turn mark" in lw.applied["header-specials"][0]
    assert [x.code for x in lw.losses if x.code == "special-not-in-header"] == ["special-not-in-header"]
    assert next(x for x in lw.losses if x.code == "special-not-in-header").kind.severity.value == "edge"
    every, lw_all = lower(llama3, TARGETS[DEFAULT], forms=Forms(header_specials="all"))
    assert len(every.special_ids) == 256 and "special-not-in-header" not in {x.code for x in lw_all.losses}
    assert every.added_tokens == low.added_tokens and every.model == low.model


@pytest.mark.runtime
def test_tokens_left_out_of_the_header_encode_and_decode_the_same(llama3, tmp_path):
    texts = ["a<|reserved_special_token_5|>b", "<|reserved_special_token_250|><|eot_id|>x",
             "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", "<|reserved_special_token_1"]
    out = {}
    for mode in ("needed", "all", "none"):
        path = tmp_path / mode / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(lower(llama3, TARGETS[DEFAULT], forms=Forms(header_specials=mode))[0]))
        out[mode] = run_runtime(path, texts=texts, decode_ids=[128010, 128255, 128009])
    assert out["needed"].encodes == out["all"].encodes == out["none"].encodes
    assert out["needed"].encodes[0] == [64, 128010, 65]  # a, the reserved token, b (this revision adds no BOS)
    assert out["needed"].decodes == out["all"].decodes == out["none"].decodes


def test_none_keeps_no_special_and_few_specials_are_left_out_too(llama3):
    none, lw = lower(llama3, TARGETS[DEFAULT], forms=Forms(header_specials="none"))
    assert none.special_ids == () and "special-not-in-header" in {x.code for x in lw.losses}
    qwen = read_model_dir(LLAMA3.parent / "qwen2.5-instruct")
    low, lw = lower(qwen, TARGETS[DEFAULT])  # 14 specials: once all kept ("its scan costs little"), now only the turn mark
    names = {t.id: t.content for t in low.added_tokens}
    assert [names[i] for i in low.special_ids] == ["<|im_start|>"]
    assert "special-not-in-header" in {x.code for x in lw.losses}


def test_no_template_keeps_eos():
    gpt2 = read_model_dir(LLAMA3.parent / "gpt2")
    low, lw = lower(gpt2, TARGETS[DEFAULT])
    assert [t.content for t in low.added_tokens if t.id in low.special_ids] == ["<|endoftext|>"]
    assert "special-not-in-header" not in {x.code for x in lw.losses}  # its only special


@pytest.mark.parametrize("other, alike", [
    ("<|im_start|>", True),  # itself
    ("<|im_end|>", True),  # a shared beginning: the header split still starts where HF's match does
    ("x<|im", False),  # ends with a beginning of it: HF matches `x<|im` first, the header split cuts inside
    ("<|im_start|>assistant", False),  # holds it: HF matches the longer token
    ("say <|im_start|>", False),
    ("|>x", True),  # begins inside it: HF's leftmost match is the turn mark, as the header split's
])
def test_the_turn_mark_must_split_where_hf_matches(other, alike):
    from mtok_export.lower.models import _splits_alike
    assert _splits_alike("<|im_start|>", ["<|im_start|>", other]) is alike
