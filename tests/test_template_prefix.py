"""A chat template that renders the post-processor's prefix tokens itself (GLM-4: `[gMASK]<sop>`
written out first, and TemplateProcessing `[gMASK] <sop> $A`): plain encode() keeps the prefix, as
HF's engine path has it, and the chat prompt holds it once, as transformers' apply_chat_template
gives it (`lower/processors.py` `_unrender_prefix`).  Checked on the real MNN runtime with no flags."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from mtok_export.api import export
from mtok_export.lower import lower
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared/corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "tokenizers/gpt2").is_dir(), reason="shared corpus not present")
needs_mnn = pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed")

ROLES = ("<|system|>", "<|user|>", "<|assistant|>", "<|observation|>")
GLM4_TEMPLATE = ("[gMASK]<sop>{% for m in messages %}{{ '<|' + m['role'] + '|>' }}\n{{ m['content'] }}"
                 "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")


def glm4_like(tmp_path: Path, template: str = GLM4_TEMPLATE) -> Path:
    """GPT-2's vocabulary with GLM-4's prefix specials, role tokens, post-processor and template shape."""
    tj = json.loads((CORPUS / "tokenizers/gpt2/tokenizer.json").read_text(encoding="utf-8"))
    base = len(tj["model"]["vocab"])
    names = ["[gMASK]", "<sop>", *ROLES]
    tj["added_tokens"] += [{"id": base + i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True} for i, t in enumerate(names)]
    tj["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "[gMASK]", "type_id": 0}}, {"SpecialToken": {"id": "<sop>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "[gMASK]", "type_id": 0}}, {"SpecialToken": {"id": "<sop>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {t: {"id": t, "ids": [base + i], "tokens": [t]} for i, t in enumerate(names[:2])}}
    src = tmp_path / "src"
    src.mkdir()
    (src / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    (src / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "chat_template": template, "eos_token": "<|endoftext|>",
        "added_tokens_decoder": {str(base + i): {"content": t, "special": True, "normalized": False, "lstrip": False,
                                                 "rstrip": False, "single_word": False} for i, t in enumerate(names)}}),
        encoding="utf-8")
    return src


@needs_corpus
def test_the_lowered_template_leaves_the_prefix_to_the_header(tmp_path):
    low, lw = lower(read_model_dir(glm4_like(tmp_path)), TARGETS[DEFAULT])
    assert low.prefix_ids == (50257, 50258)
    assert not low.chat.text.startswith("[gMASK]<sop>") and low.chat.text == GLM4_TEMPLATE[len("[gMASK]<sop>"):]
    assert "prefix-from-header" in lw.applied and lw.prefix_text == "[gMASK]<sop>"


@needs_corpus
def test_a_template_the_cut_would_change_keeps_its_prefix(tmp_path):
    """`[gMASK]<sop>` rendered only for some conversations: cutting it would change the others, so
    the template is kept (the chat path then holds the prefix twice for those, and verify says so)."""
    t = "{% if messages[0]['role'] == 'system' %}[gMASK]<sop>{% endif %}" + GLM4_TEMPLATE[len("[gMASK]<sop>"):]
    low, lw = lower(read_model_dir(glm4_like(tmp_path, t)), TARGETS[DEFAULT])
    assert low.chat.text == t and "prefix-from-header" not in lw.applied


@needs_corpus
@needs_mnn
def test_glm4_chat_ids_equal_with_no_flags(tmp_path):
    res = export(glm4_like(tmp_path), tmp_path / "out")
    assert res.written and res.verify.ok and res.verify.unexplained == 0
    for name in ("engine ids", "raw ids", "chat text", "chat ids"):
        c = res.verify.check(name)
        assert c.total > 0 and c.ok == c.total, (name, c.ok, c.total, c.mismatches[:1])
    print(f"chat ids {res.verify.check('chat ids').ok}/{res.verify.check('chat ids').total}")
