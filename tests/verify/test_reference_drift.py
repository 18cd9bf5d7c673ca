"""Reference disagreement as a finding (issue 26): where transformers' AutoTokenizer rebuilds a
folder's tokenizer from its class (Qwen2Tokenizer's split regex, LlamaTokenizer's normalizer and
pre-tokenizer) and so differs from the folder's tokenizer.json, verify says so (which one the file
follows, how many corpus inputs differ, an example, which stacks see which), tokenizes the chat
renders with the file's own engine, and does not fail the file for following its tokenizer.json.

The Qwen3.5 case is rebuilt from Qwen2.5's tokenizer.json with Qwen3.5's split regex
(`[\\p{L}\\p{M}]+` where Qwen2Tokenizer's class has `\\p{L}+`); Llama-2 and Phi-3 are the corpus's."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
import unicodedata
from pathlib import Path

import pytest

from mtok_export.corpus import builtin_chats, builtin_corpus
from mtok_export.verify.reference import _chat_tokenizer, hf_reference
from mtok_export.verify.reference_drift import differing_components
from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
_CORPUS_AND_TRANSFORMERS = pytest.mark.skipif(
    not (CORPUS / "qwen2.5-instruct").is_dir() or importlib.util.find_spec("transformers") is None,
    reason="shared corpus or transformers not present")


def needs(test):
    """The shared corpus and transformers, whose load takes seconds: out of the quick loop."""
    return pytest.mark.runtime(_CORPUS_AND_TRANSFORMERS(test))

QWEN2_LETTERS, QWEN35_LETTERS = r"\p{L}+", r"[\p{L}\p{M}]+"


def qwen35_like(tmp_path: Path) -> Path:
    """Qwen2.5's folder with Qwen3.5's split regex in its tokenizer.json (the class stays Qwen2Tokenizer)."""
    tj = json.loads((CORPUS / "qwen2.5-instruct/tokenizer.json").read_text(encoding="utf-8"))
    split = tj["pre_tokenizer"]["pretokenizers"][0]["pattern"]
    assert QWEN2_LETTERS in split["Regex"]
    split["Regex"] = split["Regex"].replace(QWEN2_LETTERS, QWEN35_LETTERS)
    src = tmp_path / "qwen35"
    src.mkdir()
    (src / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    (src / "tokenizer_config.json").write_bytes((CORPUS / "qwen2.5-instruct/tokenizer_config.json").read_bytes())
    return src


def _texts() -> list[str]:
    return [s.text for s in builtin_corpus() if "\x00" not in s.text]


def _multilingual(ending: str = ""):
    """The corpus's conversation ending in "Привет! नमस्ते", with `ending` added to its last turn."""
    c = next(c for c in builtin_chats() if c.id == "multilingual")
    last = {**c.messages[-1], "content": c.messages[-1]["content"] + ending}
    return [dataclasses.replace(c, messages=(*c.messages[:-1], last))]


@needs
def test_qwen35_like_folder_disagreement_is_reported(tmp_path):
    src = qwen35_like(tmp_path)
    texts = ["Hello world", *_texts()]
    ref = hf_reference(src, texts, [])
    d = ref.drift
    assert d is not None and d["follows"] == "tokenizer.json" and d["transformers_class"] == "Qwen2Tokenizer"
    assert d["components"] == ["pre_tokenizer"]  # the regex, nothing else
    assert d["inputs"] == len(texts) and 1 <= d["differ"] < len(texts)
    # the example is the shortest differing input, with both sides' ids as each library gives them
    from tokenizers import Tokenizer

    ex = d["example"]
    file_ids = Tokenizer.from_file(str(src / "tokenizer.json")).encode(ex["text"], add_special_tokens=False).ids
    class_ids = _chat_tokenizer(src)(ex["text"], add_special_tokens=False)["input_ids"]
    assert ex["tokenizer.json"] == file_ids != class_ids == ex["Qwen2Tokenizer"]
    assert any(unicodedata.category(c) in ("Mn", "Mc") for c in ex["text"])  # a mark: what the regexes split apart
    assert "vLLM" in " ".join(d["stacks"]["Qwen2Tokenizer"]) and "MNN with this file" in d["stacks"]["tokenizer.json"]
    assert "for " + str(d["differ"]) + " of " + str(len(texts)) in d["summary"]


@needs
def test_agreeing_folder_reports_nothing():
    """The control: Qwen2.5's own tokenizer.json is what Qwen2Tokenizer rebuilds."""
    assert hf_reference(CORPUS / "qwen2.5-instruct", _texts(), []).drift is None


@needs
def test_chat_ids_come_from_the_files_engine(tmp_path):
    """A conversation ending in mixed scripts: its render tokenized by tokenizers (the engine of every
    other check), not by AutoTokenizer, whose ids differ here."""
    from tokenizers import Tokenizer

    src = qwen35_like(tmp_path)
    # Qwen2.5's merges split "नमस्ते" alike either way; Arabic with its vowel marks does not
    ref = hf_reference(src, ["x"], _multilingual(" كَتَبَ الطَّالِبُ"))
    text, ids = ref.chat_text[0], ref.chat_ids[0]
    assert text.rstrip().endswith("<|im_start|>assistant") and "नमस्ते" in text
    assert ids == Tokenizer.from_file(str(src / "tokenizer.json")).encode(text, add_special_tokens=False).ids
    assert ids != _chat_tokenizer(src)(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("name", ["llama2-7b-hf", "phi-3-mini-4k-instruct"])
@needs
def test_llama2_and_phi3_disagree_with_their_class(name):
    """transformers 5's LlamaTokenizer rebuilds the normalizer/pre-tokenizer: no `▁` prepended at the
    start of ' Hello world', two leading spaces read as one piece and a `▁`."""
    texts = _texts()
    d = hf_reference(CORPUS / name, ["  leading two spaces", *texts], []).drift
    assert d is not None and d["transformers_class"] == "LlamaTokenizer"
    assert {"normalizer", "pre_tokenizer"} <= set(d["components"])
    assert d["differ"] >= 20


def test_components_compare_the_model_without_its_vocabulary():
    a = {"normalizer": None, "pre_tokenizer": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {"a": 0}}}
    assert differing_components(a, {**a, "model": {"type": "BPE", "vocab": {"b": 0}}}) == []
    assert differing_components(a, {**a, "model": {"type": "BPE", "byte_fallback": True, "vocab": {}}}) == ["model"]
    assert differing_components(a, {**a, "pre_tokenizer": {"type": "Metaspace"}}) == ["pre_tokenizer"]


@needs
@needs_mnn
def test_plain_export_passes_and_states_the_disagreement(tmp_path, capsys, monkeypatch):
    """No flags: exit 0, chat ids all equal, the finding in the report, the manifest and the verdict."""
    from mtok_export.cli import export_main

    src = qwen35_like(tmp_path)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["mtok-export", "--path", str(src), "--output", str(out),
                                      "--report", str(tmp_path / "r.json")])
    with pytest.raises(SystemExit) as e:
        export_main()
    printed = " ".join(capsys.readouterr().out.split())
    assert (e.value.code or 0) == 0, printed
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    checks = {c["name"]: c for c in report["verify"]["checks"]}
    assert checks["chat ids"]["ok"] == checks["chat ids"]["total"] > 0
    assert "tokenizers" in checks["chat ids"]["reference"]
    manifest = json.loads((out / "tokenizer.mtok.json").read_text(encoding="utf-8"))
    found = manifest["verification"]["reference"]["disagreement"]
    assert found["transformers_class"] == "Qwen2Tokenizer" and found["follows"] == "tokenizer.json"
    assert "the references disagree" in printed and "This file follows the tokenizer.json" in printed
