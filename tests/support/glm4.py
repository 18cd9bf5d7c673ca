"""A GLM-4-shaped tokenizer folder (GPT-2's vocabulary under GLM-4's prefix specials, role tokens,
post-processor and chat template), for the prefix tests and the dead-end message test."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus_dirs import SHARED as CORPUS

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
