"""Round trips: every corpus/sample tokenizer through read -> lower -> write -> read, byte-stable
output (also across hash seeds), the export CLI's all-or-nothing write, and hypothesis properties
over random small IRs built only from what `.mtok` can carry."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtok_export.ir import AddedToken, ChatTemplate, Pattern, Tokenizer
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir.processors import PostProgram
from mtok_export.mtok import read_mtok, write_mtok

from tests.support.corpus_dirs import TOKENIZER_DIRS


# ---------------------------------------------------------------- corpus and samples

def test_corpus_is_present(tokenizer_dirs):
    names = {n for n in tokenizer_dirs if n.startswith("corpus/")}
    assert len(names) >= 10, names  # the shared corpus has 10 tokenizer.json directories


def test_read_write_read_is_identity(tokenizer_name, lowered_corpus):
    e = lowered_corpus[tokenizer_name]
    back, layout = read_mtok(e.data)
    assert back == e.lowered
    assert layout.size == len(e.data) and all(s.present for s in layout.sections)


def test_write_is_deterministic(tokenizer_name, lowered_corpus):
    e = lowered_corpus[tokenizer_name]
    assert write_mtok(e.lowered) == e.data
    assert write_mtok(read_mtok(e.data)[0]) == e.data


_HASH_SCRIPT = """
import hashlib, sys
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import TARGETS
for d in sys.argv[1:]:
    print(hashlib.sha256(write_mtok(lower(read_model_dir(d), TARGETS["mnn-3.6"])[0])).hexdigest())
"""


def _pick_two() -> list[str]:
    # Set- and dict-heavy inputs: many special tokens / stop sources, and an NFD-table normalizer.
    wanted = ["corpus/qwen2.5-instruct", "corpus/bert-base-uncased", "samples/qwen-bpe", "samples/bert-wordpiece"]
    return [n for n in wanted if n in TOKENIZER_DIRS][:2]


@pytest.mark.runtime
@pytest.mark.skipif(len(_pick_two()) < 2, reason="needs two of the chosen tokenizers")
def test_bytes_independent_of_hash_seed(lowered_corpus):
    names = _pick_two()
    dirs = [str(TOKENIZER_DIRS[n]) for n in names]
    digests = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", _HASH_SCRIPT, *dirs], env=env, capture_output=True,
                             text=True, timeout=120, check=True).stdout.split()
        digests.append(out)
    here = [hashlib.sha256(lowered_corpus[n].data).hexdigest() for n in names]
    assert digests[0] == digests[1] == here


def _run_export(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    from mtok_export.cli import export_main

    monkeypatch.setattr(sys, "argv", ["mtok-export", *map(str, args)])
    with pytest.raises(SystemExit) as info:
        export_main()
    out, err = capsys.readouterr()
    return info.value.code or 0, out, err


@pytest.mark.runtime
def test_export_cli_all_or_nothing(tokenizer_name, lowered_corpus, tmp_path, monkeypatch, capsys):
    e = lowered_corpus[tokenizer_name]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, out, err = _run_export(monkeypatch, capsys, "--path", e.directory, "-o", out_dir, "--no-verify")
    from mtok_export.policy import Policy, decide, usage_of

    # declared severities (no verify), and what the model's use cannot reach (an encoder's decode losses)
    refused = {d.code for d in decide(e.lowering.losses, Policy(), usage=usage_of(e.source)) if not d.accepted}
    if refused:
        assert code == 3, err
        assert list(out_dir.iterdir()) == []  # no file, no temporary left behind
        assert f"the policy refuses {len(refused)} loss code(s)" in err
        for loss in e.lowering.losses:
            assert f"[{loss.code}] " in out
    else:
        assert code == 0, err
        assert sorted(p.name for p in out_dir.iterdir()) == ["tokenizer.mtok", "tokenizer.mtok.json"]
        assert (out_dir / "tokenizer.mtok").read_bytes() == e.data

    lossy_dir = tmp_path / "lossy"
    code, out, err = _run_export(monkeypatch, capsys, "--path", e.directory, "-o", lossy_dir, "--no-verify",
                                 "--allow-lossy")
    assert code == 0, err
    assert sorted(p.name for p in lossy_dir.iterdir()) == ["tokenizer.mtok", "tokenizer.mtok.json"]
    assert (lossy_dir / "tokenizer.mtok").read_bytes() == e.data
    assert not (e.directory / "tokenizer.mtok").exists()  # -o was honoured: the source stays untouched


# ---------------------------------------------------------------- properties over generated IRs

u32 = st.integers(0, 2**32 - 1)
small_text = st.text(max_size=6)  # any scalar values (no surrogates), incl. non-ASCII and controls
short_text = st.text(max_size=3)
table = st.dictionaries(st.integers(0, 0x10FFFF).filter(lambda c: not 0xD800 <= c <= 0xDFFF), short_text,
                        max_size=4).map(lambda d: tuple(sorted(d.items())))

normalizer_leaf = st.one_of(
    st.builds(N.Prepend, small_text),
    st.builds(N.Replace, st.builds(Pattern, small_text), small_text),
    st.builds(N.Strip, st.booleans(), st.booleans()),
    st.builds(N.CodepointMap, table),
    st.builds(N.MnnBertNormalizer, st.booleans(), st.booleans(), st.booleans(), st.booleans(), st.none()),
    st.builds(N.MnnBertNormalizer, st.booleans(), st.booleans(), st.just(True), st.booleans(), table),
    st.builds(N.MnnBertNormalizer, st.booleans(), st.booleans(), st.just(False), st.booleans(), st.just(())),
)
normalizers = st.recursive(normalizer_leaf, lambda kids: st.lists(kids, max_size=3).map(
    lambda xs: N.Sequence(tuple(xs))), max_leaves=6)

pre_leaf = st.one_of(
    st.builds(P.ByteLevel, st.just(False), st.just(True), st.booleans()),
    st.builds(P.Digits, st.booleans()),
    st.builds(P.Metaspace, small_text, st.sampled_from(["always", "never"]), st.just(False)),
    st.builds(P.Split, st.builds(Pattern, small_text, st.just(True)),
              st.sampled_from(["Isolated", "Removed", "MergedWithPrevious"]), st.booleans()),
    st.just(P.BertPreTokenizer()),
)
pre_tokenizers = st.recursive(pre_leaf, lambda kids: st.lists(kids, max_size=3).map(
    lambda xs: P.Sequence(tuple(xs))), max_leaves=6)

decoder_leaf = st.one_of(
    st.just(D.ByteLevel()), st.just(D.ByteFallback()), st.just(D.Fuse()),
    st.builds(D.Metaspace, small_text, st.sampled_from(["always", "never"]), st.just(True)),
    st.builds(D.WordPiece, small_text, st.booleans()),
    st.builds(D.Replace, st.builds(Pattern, small_text), small_text),
    st.builds(D.Strip, small_text, u32, u32),
)
decoders = st.recursive(decoder_leaf, lambda kids: st.lists(kids, max_size=3).map(
    lambda xs: D.Sequence(tuple(xs))), max_leaves=6)


@st.composite
def models(draw):
    tokens = draw(st.lists(st.text(max_size=5), min_size=1, max_size=12, unique=True))
    ids = draw(st.permutations(range(len(tokens))))
    vocab = dict(zip(tokens, ids))
    kind = draw(st.sampled_from(["BPE", "WordPiece", "Unigram"]))
    if kind == "BPE":
        pair = st.tuples(st.sampled_from(tokens), st.sampled_from(tokens))
        return M.BPE(vocab, tuple(draw(st.lists(pair, max_size=10))), byte_fallback=draw(st.booleans()),
                     mnn_byte_level=draw(st.booleans()))
    if kind == "WordPiece":
        return M.WordPiece(vocab, draw(small_text), draw(small_text), draw(u32))
    scores = draw(st.lists(st.floats(allow_nan=False), min_size=len(tokens), max_size=len(tokens)))
    return M.Unigram(tuple(zip(tokens, scores)), draw(st.integers(0, len(tokens) - 1)), draw(st.booleans()))


added_tokens = st.lists(st.builds(AddedToken, u32, small_text, st.just(False), st.booleans(), st.booleans(),
                                  st.just(False), st.booleans()), max_size=3).map(tuple)
programs = st.one_of(st.none(), st.lists(st.one_of(st.none(), u32), min_size=1, max_size=8).map(
    lambda ops: PostProgram(tuple(ops))))
ids = st.lists(u32, max_size=4).map(tuple)
chats = st.builds(ChatTemplate, st.text(max_size=40), small_text, small_text, st.booleans())

irs = st.builds(Tokenizer, model=models(), normalizer=st.none() | normalizers,
                pre_tokenizer=st.none() | pre_tokenizers, decoder=decoders, post_processor=programs,
                added_tokens=added_tokens, special_ids=ids, stop_ids=ids, prefix_ids=ids, chat=chats)


@pytest.mark.runtime
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(irs)
def test_generated_ir_round_trips(ir):
    data = write_mtok(ir)
    back, layout = read_mtok(data)
    assert back == ir
    assert write_mtok(back) == data
    assert layout.size == len(data)


@pytest.mark.runtime
@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), u32), min_size=1, max_size=12))
def test_generated_programs_never_read_as_legacy(ops):
    ir = Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse(), post_processor=PostProgram(tuple(ops)))
    back, layout = read_mtok(write_mtok(ir))
    assert back.post_processor == PostProgram(tuple(ops)) and not layout.legacy_program
