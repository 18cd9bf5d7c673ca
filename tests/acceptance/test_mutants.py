"""Verify must catch wrong files (DESIGN 4.1, "test the tests"): for six corpus tokenizers of
different families, twelve kinds of wrong file (`tests/support/mutants.py`) are written from the honest
lowering and verified against the original source.  Every mutant that the runtime can tell apart
from the honest file (different ids, decodes, renders, stop list or embedded eos/bos) must fail
verify; every honest export must pass.  Prints the killed/total table."""

from __future__ import annotations

import dataclasses

from pathlib import Path

import pytest
from tests.support.mutants import MUTATIONS
from tests.support.verify_jobs import CORPUS_ONLY

from mtok_export.lower import lower
from mtok_export.mtok import read_mtok, write_mtok
from mtok_export.mtok.header import read_header
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.check import VerifyJob, verify
from mtok_export.corpus import builtin_chats, builtin_corpus
from mtok_export.verify.references import choose

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "tokenizers"
FAMILIES = {"gpt2": "byte-level BPE", "qwen2.5-instruct": "byte-level BPE + NFC + chat",
            "llama2-7b-hf": "SentencePiece BPE, byte fallback", "t5-small": "Unigram, charsmap",
            "bert-base-uncased": "WordPiece", "phi-3-mini-4k-instruct": "SentencePiece BPE + chat specials"}
ROWS: dict[str, dict[str, str]] = {}


pytestmark = pytest.mark.runtime  # every mutant on the MNN runtime


@pytest.fixture(scope="module", autouse=True)
def table():
    yield
    if not ROWS:
        return
    from tests.support.summary import SUMMARY

    kinds = list(MUTATIONS)
    SUMMARY.append("")
    SUMMARY.append("mutation test: K killed, - equivalent (the runtime cannot tell it apart), . not applicable")
    SUMMARY.append(f"{'tokenizer':24} " + " ".join(f"{k[:6]:>6}" for k in kinds) + "  killed/distinguishable  honest")
    for name, row in ROWS.items():
        killed = sum(v == "K" for v in row.values())
        dist = sum(v in ("K", "S") for v in row.values())
        SUMMARY.append(f"{name:24} " + " ".join(f"{row.get(k, '?'):>6}" for k in kinds)
                       + f"  {killed:>6}/{dist:<16} {row['honest']}")


def _observable(path: Path) -> tuple:
    """What the engine reads from the file besides what the runtime computes: the stop list and the
    embedded eos/bos strings."""
    data = path.read_bytes()
    _, (_, stops, _), _ = read_header(data, str(path))
    chat = read_mtok(data, str(path))[0].chat
    return tuple(sorted(stops)), chat.eos_token, chat.bos_token


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not found next to the repository")
@pytest.mark.parametrize("name", list(FAMILIES))
def test_mutants_fail_verify(name, tmp_path):
    src = CORPUS / name
    tok = read_model_dir(src)
    low, lw = lower(tok, TARGETS[DEFAULT])
    samples, chats = list(builtin_corpus()), list(builtin_chats())
    cache = {}

    chosen = choose(tok)

    def once(texts, chat_list):  # the source's reference, computed once for all mutants
        if "ref" not in cache:
            cache["ref"] = chosen.run(texts, chat_list)
        return cache["ref"]

    reference = dataclasses.replace(chosen, run=once)
    job = VerifyJob(tok, low, lw, samples, chats, CORPUS_ONLY)

    def run(ir, label):
        path = tmp_path / label / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(ir))
        return path, verify(job, path, reference)

    honest_path, honest = run(low, "honest")
    row = ROWS.setdefault(name, {})
    row["honest"] = "passes" if honest.ok else f"FAILS ({honest.unexplained} unexplained)"
    assert honest.ok, [(m.check, m.sample, m.expected, m.got) for c in honest.checks for m in c.mismatches
                       if not m.explanation][:3]
    survivors = []
    for kind, mutate in MUTATIONS.items():
        wrong = mutate(low)
        if wrong is None:
            row[kind] = "."
            continue
        path, report = run(wrong, kind)
        told_apart = (report.runtime_output != honest.runtime_output
                      or _observable(path) != _observable(honest_path))
        if not told_apart:
            row[kind] = "-"
            continue
        row[kind] = "S" if report.ok else "K"
        if report.ok:
            survivors.append(kind)
    assert not survivors, f"{name}: verify passed wrong files: {survivors}"
    assert sum(v == "K" for v in row.values()) >= 6  # most kinds apply to every family
