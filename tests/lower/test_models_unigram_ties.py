"""Unigram ties (issue 14): what the file's scores can and cannot do about the runtime's tie-break.

HF (and sentencepiece) keep, at each end position, the first best candidate in order of start
position: the *longest* last piece.  The runtime (TC UnigramModel::tokenize) walks start positions
backwards and replaces only on a strictly better score: the *shortest* last piece.  Both add f64
scores in the same order (best up to the start + the piece), so a file holding HF's own in-memory
values (`lower.models.hf_f64`: serde_json reads some JSON scores one ulp off) compares every pair of
paths exactly as HF does; they differ only where two paths have *equal* f64 sums.

Those ties cannot be broken by scores.  Two pieces u = w^i, v = w^j (i < j) of one root w commute
(uv = vu).  Where the best path holds them next to each other, the runtime's candidate ending in u
is never worse than the one ending in v (the best score up to its start is at least that of the
path through v), and with exact sums (float32 scores, as every SentencePiece model has) the two
totals are equal whatever the scores, since any two paths with the same pieces sum to the same
total: the runtime emits v, u where HF emits u, v.  A per-piece perturbation can only separate paths
made of different pieces; every tie found here (corpus and the exhaustive checks below) is a
reordering of the same pieces.  Scores moved off the float32 grid make the sums round, and rounding
can favour either order, but which one depends on the running total before the tie (the text before
it in the word): scores within 1e-12 of T5's that make the runtime emit HF's `▁ 77 777` for `77777`
make it emit `▁ b 777 77` for `b77777`, where HF keeps `▁ b 77 777` (the last two tests, the second on
MNN 3.6.1).  No scores order every context; `unigram-ties` therefore stays."""

from __future__ import annotations

import math
import struct
from dataclasses import replace

import pytest

from mtok_export.ir import models as M
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.readers.sentencepiece import read_sentencepiece
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.reference_tiktoken import hf_from_ir

from tests.support.corpus_dirs import CORPUS
from tests.support.marks import needs_mnn

SOURCES = {"t5-small": CORPUS / "t5-small", "sp-test_model": CORPUS / "sp-test-models/test_model.model",
           "sp-test_ja_model": CORPUS / "sp-test-models/test_ja_model.model"}


def _read(name):
    path = SOURCES[name]
    if not path.exists():
        pytest.skip("shared corpus not found next to the repository")
    return read_model_dir(path) if path.is_dir() else read_sentencepiece(path)


def _pieces(tok) -> dict[str, float]:
    """The pieces the model can produce from text (not unk, not added tokens), with the scores the
    file holds."""
    added = {t.content for t in tok.added_tokens}
    m = lower(tok, TARGETS[DEFAULT])[0].model
    return {p: s for i, (p, s) in enumerate(m.vocab) if i != m.unk_id and p not in added}


def _total(pieces, path) -> float:
    """A path's score as both engines add it."""
    total = 0.0
    for p in path:
        total += pieces[p]
    return total


def viterbi(text: str, pieces: dict[str, float], *, runtime: bool, longest: int) -> list[str] | None:
    """Best segmentation of one pre-token, with HF's tie-break or (`runtime`) MNN's; the same f64
    sums in the same order as both (`longest`: the longest piece).  None when some character is
    not covered."""
    best: list = [None] * (len(text) + 1)
    back = [0] * (len(text) + 1)
    best[0] = 0.0
    for i in range(1, len(text) + 1):
        starts = range(max(0, i - longest), i)
        for j in (reversed(starts) if runtime else starts):
            score = pieces.get(text[j:i])
            if best[j] is not None and score is not None and (best[i] is None or best[j] + score > best[i]):
                best[i], back[i] = best[j] + score, j
    if best[-1] is None:
        return None
    out, i = [], len(text)
    while i:
        out.append(text[back[i]:i])
        i = back[i]
    return out[::-1]


def root(piece: str) -> str:
    """The shortest w with piece = w^k."""
    return next(piece[:k] for k in range(1, len(piece) + 1) if len(piece) % k == 0 and piece[:k] * (len(piece) // k) == piece)


def commuting_runs(pieces) -> list[str]:
    """w^k for every root w with two or more powers in the vocabulary, k up to twice the longest
    power plus one, alone and after the word-start mark."""
    powers: dict[str, set] = {}
    for p in pieces:
        powers.setdefault(root(p), set()).add(len(p))
    runs = []
    for w, lens in sorted(powers.items()):
        if len(lens) > 1:
            runs += [prefix + w * k for k in range(2, 2 * max(lens) // len(w) + 2) for prefix in ("", "\u2581")]
    return runs


@pytest.mark.runtime
@pytest.mark.parametrize("name", list(SOURCES))
def test_every_tie_in_the_vocabulary_is_a_reordering(name):
    """Exhaustive over the vocabulary's own texts (each piece alone) and over every run of commuting
    pieces, with the scores the file holds: wherever HF's and the runtime's tie-breaks differ, the two
    paths are the same pieces in another order with equal f64 totals (an exact tie), which a
    per-piece score cannot separate when sums are exact, as the source's float32 scores make them."""
    tok = _read(name)
    # the source's scores are float32 (sentencepiece's): exact sums for longer paths than any input
    scores = [s for _, s in tok.model.vocab]
    assert all(struct.unpack("<f", struct.pack("<f", s))[0] == s for s in scores)
    quantum = min(2.0 ** (math.frexp(s)[1] - 24) for s in scores if s)  # every score is a multiple of it
    assert 2 ** 53 * quantum / max(map(abs, scores)) > 10 ** 8  # pieces in a path before a sum can round
    pieces = _pieces(tok)
    longest = max(map(len, pieces))
    differ = 0
    for text in [*pieces, *commuting_runs(pieces)]:
        hf = viterbi(text, pieces, runtime=False, longest=longest)
        rt = viterbi(text, pieces, runtime=True, longest=longest)
        if hf != rt:
            differ += 1
            assert sorted(hf) == sorted(rt) and _total(pieces, hf) == _total(pieces, rt), text
    assert differ > 0  # the vocabulary has commuting pieces the runtime orders the other way


@needs_mnn
def test_the_emulation_is_the_runtime_and_hf(tmp_path):
    """The two tie-breaks above are what MNN 3.6.1 and HF do (T5, runs of ASCII commuting pieces)."""
    from mtok_export.verify.runtime import run_runtime

    tok = _read("t5-small")
    pieces = _pieces(tok)
    texts = [t for t in commuting_runs(pieces) if t.isascii() and t.strip() == t and t.isprintable()][:120]
    low, _ = lower(tok, TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    got = run_runtime(path, texts=texts).encodes
    hf = hf_from_ir(tok)
    ids = M.vocab_of(tok.model)
    differ = 0
    longest = max(map(len, pieces))
    for text, rt, want in zip(texts, got, hf.encode_batch(texts, add_special_tokens=False)):
        assert want.ids == [ids[p] for p in viterbi("\u2581" + text, pieces, runtime=False, longest=longest)], text
        assert rt == [ids[p] for p in viterbi("\u2581" + text, pieces, runtime=True, longest=longest)], text
        differ += rt != want.ids
    assert differ > 10


@needs_mnn
def test_no_scores_make_the_runtime_emit_hf_order(tmp_path):
    """'77777': HF emits ▁ 77 777.  The runtime never does, whatever the scores of 77 and 777 in the
    file: it emits 777 77 when they tie, or other pieces when they do not."""
    from mtok_export.verify.runtime import run_runtime

    tok = _read("t5-small")
    ids = M.vocab_of(tok.model)
    want = [ids["\u2581"], ids["77"], ids["777"]]
    assert hf_from_ir(tok).encode("77777", add_special_tokens=False).ids == want
    low, _ = lower(tok, TARGETS[DEFAULT])
    base = dict(low.model.vocab)
    for k, (d77, d777) in enumerate([(0, 0), (1e-9, 0), (0, 1e-9), (-1e-9, 0), (0, -1e-9), (2.0, 2.0),
                                     (base["777"] - base["77"], base["77"] - base["777"]), (5.0, -0.5)]):
        vocab = tuple((p, s + d77 if p == "77" else s + d777 if p == "777" else s) for p, s in low.model.vocab)
        path = tmp_path / f"{k}" / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(replace(low, model=replace(low.model, vocab=vocab))))
        got = run_runtime(path, texts=["77777"]).encodes[0]
        assert got != want, (d77, d777)
        if sorted(got) == sorted(want):
            assert got == [ids["\u2581"], ids["777"], ids["77"]]


def test_scores_are_written_as_hf_holds_them():
    """serde_json reads some JSON scores one ulp off the correctly rounded value; the file holds
    HF's values (every T5 score, checked against HF's own serialization of what it holds)."""
    import json

    from tokenizers import Tokenizer

    from mtok_export.lower.models import hf_f64

    path = SOURCES["t5-small"] / "tokenizer.json"
    if not path.is_file():
        pytest.skip("shared corpus not found next to the repository")
    held = [s for _, s in json.loads(Tokenizer.from_file(str(path)).to_str())["model"]["vocab"]]
    read = [s for _, s in json.loads(path.read_bytes())["model"]["vocab"]]
    assert sum(a != b for a, b in zip(held, read)) > 1000  # Python's values are not HF's
    assert [hf_f64(s) for s in read] == held
    assert hf_f64(-12.130167007446289) == -12.130167007446287 and hf_f64(-2.0122928619384766) == -2.012292861938477
    assert hf_f64(0.0) == 0.0 and hf_f64(-1e-09) == -1e-09 and hf_f64(2.5e+30) == 2.5e+30


def test_whole_number_scores_are_their_own_hf_value():
    """The shortcut for whole numbers (SentencePiece BPE's -rank scores) agrees with the digits."""
    import math

    from mtok_export.lower.models import _serde_f64, hf_f64

    wholes = [0.0, -0.0, 1.0, -1.0, -12345.0, -130343.0, 2.0 ** 40, -(2.0 ** 46), 99999999999999.0, -99999999999999.0]
    for x in wholes:
        got, want = hf_f64(x), _serde_f64(x)
        assert got == want and math.copysign(1, got) == math.copysign(1, want), x
    for x in (1e14, -1e14, 1e16, 0.5, -12.130167007446289):  # beyond the shortcut: the digits decide
        assert hf_f64(x) == _serde_f64(x)
    assert hf_f64(-12.130167007446289) != -12.130167007446289  # and the digits do differ from Python's


def _nudged(pieces, rng, keys, spread=3000):
    """`pieces` with the scores of `keys` moved by up to `spread` f64 ulps each (about 1e-12 here)."""
    out = dict(pieces)
    for key in keys:
        x, k = pieces[key], rng.randint(-spread, spread)
        for _ in range(abs(k)):
            x = math.nextafter(x, math.inf if k > 0 else -math.inf)
        out[key] = x
    return out


def _rounding_breaks_one_tie():
    """Scores within 1e-12 of T5's (every strict order kept) whose f64 rounding breaks the '▁77777' tie
    HF's way on the runtime's Viterbi (emulated), found by a seeded search; with the text before
    ('▁b77777'), where the same rounding goes the other way."""
    import random

    tok = _read("t5-small")
    pieces = _pieces(tok)
    longest = max(map(len, pieces))
    hf = {t: viterbi(t, pieces, runtime=False, longest=longest) for t in ("\u258177777", "\u2581b77777")}
    rng = random.Random(1)
    for _ in range(200):
        p = _nudged(pieces, rng, ("\u2581", "77", "777"))
        if viterbi("\u258177777", p, runtime=True, longest=longest) == hf["\u258177777"]:
            return tok, p, hf, longest
    raise AssertionError("no rounding found that breaks the tie")


def test_rounding_can_break_a_tie_only_for_one_running_total():
    """A per-piece perturbation off the float32 grid makes the sums round, and rounding can favour
    HF's order: fl(fl(P + s77) + s777) > fl(fl(P + s777) + s77) for the running total P of '▁'.  But
    its direction depends on P, the text before the tie: the scores that fix '▁77777' break
    '▁b77777' (HF ▁ b 77 777, the runtime ▁ b 777 77).  No fixed scores order every context."""
    tok, p, hf, longest = _rounding_breaks_one_tie()
    assert all(abs(p[k] - s) < 1e-11 for k, s in _pieces(tok).items())
    assert viterbi("\u2581b77777", p, runtime=True, longest=longest) == ["\u2581", "b", "777", "77"]
    assert hf["\u2581b77777"] == ["\u2581", "b", "77", "777"]


@needs_mnn
def test_rounding_counter_example_on_the_runtime(tmp_path):
    """The emulated counter-example above, on MNN 3.6.1 with a file holding those scores."""
    from mtok_export.verify.runtime import run_runtime

    tok, p, _, _ = _rounding_breaks_one_tie()
    low, _ = lower(tok, TARGETS[DEFAULT])
    vocab = tuple((piece, p.get(piece, s) if piece in ("\u2581", "77", "777") else s) for piece, s in low.model.vocab)
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(replace(low, model=replace(low.model, vocab=vocab))))
    texts = ["77777", "b77777"]
    got = run_runtime(path, texts=texts).encodes
    want = [e.ids for e in hf_from_ir(tok).encode_batch(texts, add_special_tokens=False)]
    assert got[0][:len(want[0])] == want[0]  # the rounding fixed this one
    assert got[1][:len(want[1])] != want[1] and sorted(got[1][:len(want[1])]) == sorted(want[1])
