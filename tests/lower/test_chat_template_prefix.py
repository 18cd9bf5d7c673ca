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


_WITHOUT_PREFIX = GLM4_TEMPLATE[len("[gMASK]<sop>"):]


@needs_corpus
def test_a_template_that_never_renders_the_prefix_is_a_chat_prefix_loss(tmp_path):
    """The post-processor adds `[gMASK]<sop>`, the template never writes it: transformers' chat path
    then has no prefix and the runtime's has it (DeepSeek-VL2's shape: a BOS prefix and a template
    without `bos_token`).  No form is exact, so it is a loss, refused by default."""
    low, lw = lower(read_model_dir(glm4_like(tmp_path, _WITHOUT_PREFIX)), TARGETS[DEFAULT])
    assert low.prefix_ids == (50257, 50258) and low.chat.text == _WITHOUT_PREFIX
    [loss] = [x for x in lw.losses if x.kind.code == "chat-prefix"]
    assert loss.kind.severity.value == "chat"


@needs_corpus
def test_a_template_that_renders_the_prefix_has_no_chat_prefix_loss(tmp_path):
    _low, lw = lower(read_model_dir(glm4_like(tmp_path)), TARGETS[DEFAULT])
    assert "chat-prefix" not in {x.kind.code for x in lw.losses}


@needs_corpus
@needs_mnn
def test_chat_prefix_is_refused_then_reproduced_on_the_runtime(tmp_path, monkeypatch):
    """Refused with no flags; accepted, every chat-ids mismatch is the runtime's prefix and nothing
    else.  A lowering that does not record the loss (the mutant) leaves those mismatches
    unexplained: the check sees the prefix, the loss does not hide anything else."""
    from mtok_export.errors import LossError, VerificationError
    from mtok_export.lower import processors

    src = glm4_like(tmp_path, _WITHOUT_PREFIX)
    with pytest.raises(LossError) as info:
        export(src, tmp_path / "refused", sweep=False)
    assert [d.code for d in info.value.decisions if not d.accepted] == ["chat-prefix"]
    res = export(src, tmp_path / "out", sweep=False, accept=["chat-prefix"])
    assert res.written and res.verify.ok and res.verify.unexplained == 0
    ids = res.verify.check("chat ids")
    assert ids.total > 0 and ids.mismatches and {m.explanation for m in ids.mismatches} == {("chat-prefix",)}
    assert res.verify.check("chat text").ok == res.verify.check("chat text").total

    monkeypatch.setattr(processors, "_unrender_prefix", _mutant_unrender(processors._unrender_prefix))
    with pytest.raises(VerificationError):
        export(src, tmp_path / "mutant", sweep=False, accept=["chat-prefix"])


def _mutant_unrender(honest):
    """Claims the template rendered the prefix (so no chat-prefix loss is recorded) and changes
    nothing else."""
    def unrender(lw, chat, prefix, lead):
        out = honest(lw, chat, prefix, lead)
        lw.cleared_lead = lw.cleared_lead or "\0"
        return out
    return unrender
