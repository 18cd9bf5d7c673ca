"""Vocabularies whose ids skip some (issue 31, class 3: OpenAI's cl100k/o200k as tokenizer.json put
<|endofprompt|> after a gap): the runtime indexes id_to_token by id, so `lower.models.fill_id_gaps`
fills each missing id with an entry no input can produce.  Built from a tokenizer of the same shape:
a small byte-level BPE whose special tokens sit in the vocab after a gap, and with one byte
character missing from the middle of the vocab (a second gap, and a character HF drops)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from mtok_export.ir import models as M
from mtok_export.lower import lower
from mtok_export.lower.models import gap_fillers
from mtok_export.mtok import read_mtok, write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS

from tests.support.commands import run_process
from tests.support.marks import needs_mnn
from tests.support.verify_jobs import CORPUS_ONLY

TEXTS = ["Hello world, the quick brown fox.", "def main():\n    return 42\n", "a `tick` here", "<|endofprompt|>x",
         "<mtok-gap-400>", "  <mtok-gap-64> <|endoftext|>", "numbers 12345 and more"]
MISSING = "`"  # a byte character left out of the vocab: HF drops it, and its id becomes a gap


def _tokenizer_json() -> dict:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = ["Hello world, the quick brown fox jumps over the lazy dog.", "def main():\n    return 42\n",
            "Tokenizers are fun; numbers 12345 and more text here."] * 20
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=400, show_progress=False,
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    j = json.loads(tok.to_str())
    vocab = j["model"]["vocab"]
    del vocab[MISSING]  # in no merge: the training text has no backtick
    n = max(vocab.values()) + 1
    j["added_tokens"] = []
    for i, content in ((n + 1, "<|endoftext|>"), (n + 2, "<|fim_prefix|>"), (n + 20, "<|endofprompt|>")):
        vocab[content] = i  # cl100k's shape: the specials are vocab entries too
        j["added_tokens"].append({"id": i, "content": content, "single_word": False, "lstrip": False,
                                  "rstrip": False, "normalized": False, "special": True})
    return j


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("gaps")
    (d / "tokenizer.json").write_text(json.dumps(_tokenizer_json(), ensure_ascii=False), encoding="utf-8")
    (d / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|endoftext|>"}), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def lowered(folder):
    tok = read_model_dir(folder)
    low, lw = lower(tok, TARGETS[DEFAULT])
    return tok, low, lw


def _gaps(vocab: dict) -> list[int]:
    return sorted(set(range(max(vocab.values()) + 1)) - set(vocab.values()))


def test_gaps_are_filled_densely_and_written(lowered):
    tok, low, lw = lowered
    gaps = _gaps(tok.model.vocab)
    assert len(gaps) == 1 + 1 + 17  # the missing byte, the id before <|endoftext|>, 17 before <|endofprompt|>
    fillers = gap_fillers(tok, low)
    assert sorted(fillers) == gaps and "id-gaps-filled" in lw.applied
    assert {t: i for t, i in low.model.vocab.items() if i not in fillers} == tok.model.vocab  # real ids unchanged
    back = read_mtok(write_mtok(low), strict=True)[0].model.vocab  # the strict reader checks density
    assert sorted(back.values()) == list(range(len(back))) and dict(back.items()) == low.model.vocab


def test_fillers_are_unreachable_on_hf(lowered):
    """The runtime's BPE only builds single symbols and the concatenations of merges: HF's BPE (the
    same algorithm, an independent implementation) on the lowered vocabulary never produces a gap id,
    and gives every text the source's ids."""
    tok, low, _ = lowered
    fillers = gap_fillers(tok, low)
    assert all(len(t) > 1 and t.isascii() and t.isprintable() for t in fillers.values())
    source = Tokenizer.from_str(json.dumps(_tokenizer_json()))
    j = json.loads(source.to_str())
    j["model"]["vocab"] = dict(low.model.vocab)
    filled = Tokenizer.from_str(json.dumps(j))
    texts = TEXTS + [c.format(t) for t in fillers.values() for c in ("{}", " {}", "a{}b")]
    for text in texts:
        ids = filled.encode(text).ids
        assert not set(ids) & set(fillers), text
        assert ids == source.encode(text).ids, text


def test_no_gaps_no_pass(lowered):
    tok, _, _ = lowered
    dense = replace(tok, model=replace(tok.model, vocab={t: i for i, t in enumerate(tok.model.vocab)}),
                    added_tokens=(), special_ids=())
    low, lw = lower(dense, TARGETS[DEFAULT])
    assert "id-gaps-filled" not in lw.applied and low.model.vocab == dense.model.vocab


@needs_mnn
def test_export_with_gaps_verifies(folder, tmp_path):
    out = tmp_path / "out"
    r = run_process("mtok-export", "--path", str(folder), "--output", str(out), "--no-chat")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "id-gaps-filled" in r.stdout and "passed: wrote" in r.stderr


@needs_mnn
def test_reachable_filler_is_caught(lowered, tmp_path):
    """The mutant: a gap filled with a text an input reaches (the missing byte character itself, which
    the runtime then produces where HF drops it).  The vocabulary sweep types every filler the file
    holds, so verify fails on it; the honest file passes."""
    from mtok_export.corpus import builtin_chats, builtin_corpus
    from mtok_export.verify.check import VerifyJob, verify
    from mtok_export.verify.references import choose

    tok, low, lw = lowered
    gap = min(_gaps(tok.model.vocab))  # the missing byte character's id
    wrong_vocab = {t: i for t, i in low.model.vocab.items() if i != gap} | {MISSING: gap}
    samples = [s for s in builtin_corpus() if MISSING not in s.text][:20]  # the sweep alone must catch it
    job = VerifyJob(tok, low, lw, samples, list(builtin_chats()), replace(CORPUS_ONLY, sweep=True))

    def check(model, label):
        path = tmp_path / label / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(replace(low, model=model)))
        return verify(job, path, choose(tok))

    assert check(low.model, "honest").ok
    report = check(replace(low.model, vocab=wrong_vocab), "mutant")
    assert not report.ok
    bad = [m for c in report.checks if c.name == "vocab sweep" for m in c.mismatches if not m.explanation]
    assert bad and any(gap in m.got for m in bad)



def test_added_tokens_past_gaps_join_the_vocab_at_their_ids(lowered):
    """Added tokens outside the vocab whose ids leave gaps (ChatGLM3's config-declared [gMASK] 64790
    after [MASK] 64789): they join the vocab at their ids, the ids between are filled, so the runtime
    decodes them (before: `added-not-decodable`, decoded to '')."""
    tok, _, _ = lowered
    added_ids = {t.id for t in tok.added_tokens}
    outside = replace(tok, model=replace(tok.model, vocab={t: i for t, i in tok.model.vocab.items() if i not in added_ids}))
    low, lw = lower(outside, TARGETS[DEFAULT])
    assert not [x for x in lw.losses if x.code == "added-not-decodable"]
    assert all(low.model.vocab[t.content] == t.id for t in tok.added_tokens)
    assert sorted(low.model.vocab.values()) == list(range(len(low.model.vocab)))


def test_an_added_token_in_a_gap_of_the_vocab_takes_its_id(lowered):
    """p50k_base's ranks leave 50256 to <|endoftext|>, an added token: it joins the vocab at its id
    inside the vocab (before: only ids past len(vocab) joined, so a gap id was filled and decoded to
    the filler's text), beside added tokens past the end (p50k_edit's FIM tokens)."""
    tok, _, _ = lowered
    first, *rest = sorted(tok.added_tokens, key=lambda t: t.id)
    top = max(tok.model.vocab.values())
    vocab = {t: i for t, i in tok.model.vocab.items() if i != 3 and t not in {a.content for a in tok.added_tokens}}
    inside = replace(first, id=3)  # a gap of the vocab
    past = [replace(t, id=top + 10 + k) for k, t in enumerate(rest)]
    gapped = replace(tok, model=replace(tok.model, vocab=vocab), added_tokens=(inside, *past))
    low, lw = lower(gapped, TARGETS[DEFAULT])
    assert not [x for x in lw.losses if x.code == "added-not-decodable"]
    assert low.model.vocab[inside.content] == 3 and all(low.model.vocab[t.content] == t.id for t in past)
    assert sorted(low.model.vocab.values()) == list(range(len(low.model.vocab)))


def test_an_id_far_past_the_vocabulary_is_not_filled():
    """A corrupt id (2**31, found by the reader fuzz) would take billions of fillers: it is left for
    the writer's "ids must be dense" error; a few reserved ids past the end are filled."""
    from mtok_export.lower.models import MAX_GAP_FILL, gap_filled

    vocab = {chr(0x41 + i): i for i in range(10)}
    assert gap_filled({**vocab, "x": 2 ** 31}) == {}
    assert gap_filled({**vocab, "x": 10 + MAX_GAP_FILL + 1}) == {}
    assert sorted(gap_filled({**vocab, "x": 25}).values()) == list(range(10, 25))
