"""Verification compares the chats of a tekken or mistral_common SentencePiece file with mistral_common's
own `encode_chat_completion` (`verify/reference_mistral.py`, issue 32): the runtime's ids of the
embedded generated template against mistral_common's ids (and text, for tekken), k/n like every chat
check; a wrong generated template (one token changed, or a SentencePiece template not rewritten to
the file's form: the mutants) is an unexplained mismatch naming the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtok_export.job_options import ReadOptions
from mtok_export.corpus import builtin_chats, builtin_corpus
from mtok_export.formats import read_source
from mtok_export.readers import chat_source
from mtok_export.verify.references import choose
from tests.support.verify_jobs import CORPUS_ONLY

mistral_common = pytest.importorskip("mistral_common")
DATA = Path(mistral_common.__file__).parent / "data"
TEKKEN = DATA / "tekken_240911.json"
SP = {"v1": DATA / "tokenizer.model.v1", "v3": DATA / "mistral_instruct_tokenizer_240323.model.v3"}

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
    assert choose(read_source(TEKKEN, ReadOptions(str(given)))).chat == ""


def _verify(tmp_path: Path, source: Path = TEKKEN):
    from mtok_export.lower import lower
    from mtok_export.mtok import write_mtok
    from mtok_export.targets import DEFAULT, TARGETS
    from mtok_export.verify.check import VerifyJob, verify

    tok = read_source(source)
    low, lw = lower(tok, TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    samples = list(builtin_corpus())[:5]
    return verify(VerifyJob(tok, low, lw, samples, list(builtin_chats()), CORPUS_ONLY), path, choose(tok))


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


@pytest.mark.runtime
@pytest.mark.parametrize("version", sorted(SP))
def test_a_sentencepiece_files_chats_get_mistral_commons_ids_and_the_raw_template_fails(version, tmp_path,
                                                                                       monkeypatch):
    report = _verify(tmp_path, SP[version])
    ids = report.check("chat ids")
    assert ids.reference.startswith(f"mistral_common {mistral_common.__version__} encode_chat_completion")
    assert ids.total >= 10 and report.ok
    # the one difference: special-token text written in a message (sentencepiece encodes it as text)
    assert [(m.sample, m.explanation) for m in ids.mismatches] == [("special-text", ("sp-added-token-text",))]
    monkeypatch.setattr(chat_source, "sp_segment_form", lambda text, controls: text)  # the mutant
    report = _verify(tmp_path, SP[version])
    bad = [m.sample for m in report.check("chat ids").mismatches if not m.explanation]
    assert len(bad) >= 10 and not report.ok
