"""The chat reference never runs a repository's code and never prompts (ChatGLM3-6B's `auto_map`
made transformers ask "Do you wish to run the custom code? [y/N]" on a terminal): a repo whose
tokenizer class is remote code gets the fast tokenizer of its tokenizer.json instead."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

from mtok_export.corpus import builtin_chats
from mtok_export.verify.reference import _chats

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "tokenizers/gpt2").is_dir(), reason="shared corpus not present")

TEMPLATE = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"


def remote_code_repo(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    src.mkdir()
    (src / "tokenizer.json").write_bytes((CORPUS / "tokenizers/gpt2/tokenizer.json").read_bytes())
    marker = tmp_path / "the-remote-code-ran"
    (src / "tokenization_custom.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nfrom transformers import PreTrainedTokenizerFast\n"
        "class CustomTokenizer(PreTrainedTokenizerFast):\n    pass\n", encoding="utf-8")
    (src / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "CustomTokenizer", "auto_map": {"AutoTokenizer": [None, "tokenization_custom.CustomTokenizer"]},
        "chat_template": TEMPLATE, "eos_token": "<|endoftext|>"}), encoding="utf-8")
    return src, marker


@needs_corpus
def test_remote_code_is_neither_run_nor_asked_about(tmp_path, monkeypatch):
    src, marker = remote_code_repo(tmp_path)

    def no_prompt(*_):
        raise AssertionError("transformers prompted")
    monkeypatch.setattr(builtins, "input", no_prompt)
    chats = [c for c in builtin_chats() if not c.tools][:3]
    texts, ids = _chats(src, chats)
    assert not marker.exists()
    assert texts[0] is not None and texts[0].endswith("<|assistant|>") and ids[0]


@needs_corpus
def test_without_the_fix_transformers_would_ask(tmp_path, monkeypatch):
    """The control: transformers' default (trust_remote_code unset) reaches the prompt for this repo."""
    from transformers import AutoTokenizer

    src, marker = remote_code_repo(tmp_path)
    asked = []

    def answer_no(prompt=""):
        asked.append(prompt)
        return "n"
    monkeypatch.setattr(builtins, "input", answer_no)
    with pytest.raises(ValueError):
        AutoTokenizer.from_pretrained(str(src))
    assert asked and "custom code" in asked[0] and not marker.exists()
