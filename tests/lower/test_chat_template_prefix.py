"""A chat template that renders the post-processor's prefix tokens itself (GLM-4: `[gMASK]<sop>`
written out first, and TemplateProcessing `[gMASK] <sop> $A`): plain encode() keeps the prefix, as
HF's engine path has it, and the chat prompt holds it once, as transformers' apply_chat_template
gives it (`lower/processors.py` `_unrender_prefix`).  Checked on the real MNN runtime with no flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtok_export.api import export
from mtok_export.lower import lower
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS

from tests.support.glm4 import GLM4_TEMPLATE, glm4_like
from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "tokenizers/gpt2").is_dir(), reason="shared corpus not present")

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
