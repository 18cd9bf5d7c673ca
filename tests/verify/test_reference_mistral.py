"""Verification compares a tekken file's chats with mistral_common's own `encode_chat_completion`
(`verify/reference_mistral.py`, issue 32): the runtime's render and ids of the embedded generated
template against mistral_common's text and ids, k/n like every chat check; a wrong generated
template (one token changed: the mutants) is an unexplained mismatch naming the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtok_export.corpus import builtin_chats, builtin_corpus
from mtok_export.formats import read_source
from mtok_export.readers import chat_source
from mtok_export.verify.references import choose

mistral_common = pytest.importorskip("mistral_common")
TEKKEN = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"

# One token of the generated template changed: each changes what the model is shown.
MUTANTS = {
    "closing-tag": ("{{- '[/INST]' }}", "{{- '[INST]' }}"),  # every conversation
    "system-separator": ("system_message ~ '\\n\\n'", "system_message ~ '\\n'"),  # conversations with a system
    "no-eos-after-answer": ("{{- eos_token }}", ""),  # multi-turn conversations
}


def test_the_chat_reference_is_mistral_common_only_for_its_own_template(tmp_path):
    tok = read_source(TEKKEN)
    assert tok.chat.kind == "mistral_common"
    assert choose(tok).chat.endswith("encode_chat_completion")
    given = tmp_path / "t.jinja"
    given.write_text("{% for m in messages %}{{ m.content }}{% endfor %}", encoding="utf-8")
    # a template of the user's: mistral_common's chats are not its reference (no chat reference)
    assert choose(read_source(TEKKEN, str(given))).chat == ""


def _verify(tmp_path: Path):
    from mtok_export.lower import lower
    from mtok_export.mtok import write_mtok
    from mtok_export.targets import DEFAULT, TARGETS
    from mtok_export.verify.check import verify

    tok = read_source(TEKKEN)
    low, lw = lower(tok, TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    samples = list(builtin_corpus())[:5]
    return verify(path, tok, low, lw, samples=samples, chats=list(builtin_chats()), reference=choose(tok))


@pytest.mark.runtime
def test_the_generated_template_gives_mistral_commons_ids_on_mnn(tmp_path):
    report = _verify(tmp_path)
    text, ids = report.check("chat text"), report.check("chat ids")
    assert ids.reference == f"mistral_common {mistral_common.__version__} encode_chat_completion"
    assert text.total == ids.total >= 10 and report.ok
    # the one difference: mistral_common encodes "<s>" and "[INST]" written in a message as text
    assert [(m.sample, m.explanation) for m in ids.mismatches] == [("special-text", ("tekken-special-text",))]


@pytest.mark.runtime
@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_a_wrong_generated_template_fails_verify(mutant, tmp_path, monkeypatch):
    old, new = MUTANTS[mutant]
    honest = chat_source._mistral_template

    def wrong(path):
        text, why = honest(path)
        assert text.count(old) == 1, mutant
        return text.replace(old, new), why

    monkeypatch.setattr(chat_source, "_mistral_template", wrong)
    report = _verify(tmp_path)
    bad = [m.sample for m in report.check("chat ids").mismatches if not m.explanation]
    assert bad and not report.ok
    assert set(bad) <= {c.id for c in builtin_chats()}  # each names its conversation
    if mutant == "system-separator":
        assert set(bad) == {"system-user", "system-multi-turn"}  # not empty-system: no separator
