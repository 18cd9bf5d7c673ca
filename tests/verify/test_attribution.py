"""Attribution by reproduction, unit-tested without the runtime: a mismatch is explained only when the
projection of a recorded loss gives exactly the "runtime" output; a near miss is unexplained."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer

from mtok_export.lower import lower
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.attribution import Attribution

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.fixture(scope="module")
def qwen():
    src = read_model_dir(SAMPLES / "qwen-bpe")
    low, lw = lower(src, TARGETS[DEFAULT])
    return Attribution(src, low, lw), Tokenizer.from_file(str(SAMPLES / "qwen-bpe/tokenizer.json"))


def test_normalizer_projection_reproduces_or_nothing(qwen):
    why, hf = qwen
    text = "\u1112\u1161\u11ab\u1100\u116e\u11a8"  # conjoining jamo: NFC composes them, the runtime cannot
    want = hf.encode(text, add_special_tokens=False).ids
    got = why.project_raw(text, why.of("normalizer"))
    assert got != want
    assert [x.code for x in why.raw(text, want, got)] == ["normalizer-approx"]
    assert why.raw(text, want, got[:-1] + [got[-1] + 1]) == ()  # one id off: not reproduced
    assert why.raw("plain text", hf.encode("plain text").ids, [1, 2, 3]) == ()


def test_trigger_only_loss_explains_only_inside_its_span(qwen):
    why, hf = qwen
    text = "left\x03right and a long tail of ordinary words"
    want = hf.encode(text, add_special_tokens=False).ids
    near = want[:]
    near[1] = near[1] + 1  # next to the \x03
    assert [x.code for x in why.raw(text, want, near)] == ["regex-control"]
    far = want[:]
    far[-1] = far[-1] + 1  # at the end, far from it
    assert why.raw(text, want, far) == ()
    assert why.raw("no control here", want, near) == ()


def test_engine_needs_the_honest_prefix_and_a_recorded_post_loss(qwen):
    why, hf = qwen
    raw = hf.encode("Hi", add_special_tokens=False).ids
    assert why.engine("Hi", raw, raw, raw, None) == ()  # nothing differs: nothing to explain
    assert why.engine("Hi", raw + [7], raw, raw, None) == ()  # the reference adds a token: no loss says why


def test_stream_projection_is_the_single_id_decode(qwen):
    why, hf = qwen
    ids = hf.encode("Hello world", add_special_tokens=False).ids
    exact = b"".join(why.surface(i) for i in ids).decode()
    assert exact == "Hello world"
    assert why.stream(ids, "Hello world", "Hello world!") == ()  # no decoder loss, and not reproduced


def test_unigram_ties_need_the_same_text_and_score():
    src = read_model_dir(SAMPLES / "t5-unigram")
    low, lw = lower(src, TARGETS[DEFAULT])
    why = Attribution(src, low, lw)
    pieces = low.model.vocab
    vocab = {p: i for i, (p, _) in enumerate(pieces)}
    # a piece that is also two pieces: the same text segmented two ways
    z, x, y = next((vocab[p], vocab[p[:k]], vocab[p[k:]]) for p in vocab if len(p) > 2
                   for k in range(1, len(p)) if p[:k] in vocab and p[k:] in vocab)
    assert why._tie([z], [x, y]) == (pieces[z][1] == pieces[x][1] + pieces[y][1])
    assert not why._tie([z], [x])  # not the same text
    assert why._tie([x, y], [x, y])
    assert why._tie([x, y, z], [z, x, y])  # the same pieces in another order: always a tie


def test_a_unigram_tie_is_exact():
    """The runtime breaks only exact ties (its f64 sums of float32 scores are exact): a segmentation
    scoring 2**-20 lower is another result, not a tie."""
    from mtok_export.ir import Tokenizer
    from mtok_export.ir import models as M

    def why(score_a):
        tok = Tokenizer(model=M.Unigram((("<unk>", 0.0), ("ab", -3.0), ("a", score_a), ("b", -2.0)), 0))
        low, lw = lower(tok, TARGETS[DEFAULT])
        return Attribution(tok, low, lw)

    assert why(-1.0)._tie([1], [2, 3])
    assert not why(-1.0 - 2.0 ** -20)._tie([1], [2, 3])
    assert not why(-1.0)._tie([1], [2])


def test_warm_passes_an_interrupt_on_and_keeps_other_failures_for_later(qwen, monkeypatch):
    # warm() runs while the runtime does, where SIGTERM raises Interrupted: swallowing it made
    # `mtok verify` wait for the runtime's time limit instead of stopping (a cold projection cache)
    from mtok_export.errors import Interrupted

    why, _ = qwen

    def fails(error):
        def _hf_for(*args, **kwargs):
            raise error
        return _hf_for

    monkeypatch.setattr(why, "_hf_for", fails(ValueError("a projection that cannot be built")))
    why.warm()  # left for the comparison to meet
    monkeypatch.setattr(why, "_hf_for", fails(Interrupted(15)))
    with pytest.raises(Interrupted):
        why.warm()


@pytest.fixture(scope="module")
def tts(tmp_path_factory):
    """The generated zoo's TTS shape: BPE with an unk token after a Whitespace split, no decoder."""
    from tests.support import gen_zoo

    folder = gen_zoo.save(gen_zoo.FOUND["unk-table-whitespace"][0], tmp_path_factory.mktemp("tts") / "tts")
    src = read_model_dir(folder)
    low, lw = lower(src, TARGETS[DEFAULT])
    return Attribution(src, low, lw), Tokenizer.from_file(str(folder / "tokenizer.json"))


def test_spans_align_past_unks_and_removed_spaces(tts):
    """Each ESC is an unk in HF ('<unk>': five bytes for one character) and nothing on the runtime
    (a control character the runtime spaces, then Whitespace removes): the differences sit on the
    trigger's characters, which a sum of token surfaces placed four bytes further per unk."""
    why, hf = tts
    text = "a b c d e f g h \x1b x y z"  # the sum of surfaces missed the 8 spaces: 8 bytes before the ESC
    want = hf.encode(text, add_special_tokens=False).ids
    unk = hf.token_to_id("<unk>")
    got = [i for i in want if i != unk]
    assert len(got) < len(want)
    assert "unk-table-gaps" in [x.code for x in why.raw(text, want, got)]
    far = want[:-1] + [want[-1] + 1]  # a difference at the end, far from every control character
    assert why.raw(text, want, far) == ()


def test_a_projection_hf_cannot_encode_explains_nothing(qwen, monkeypatch):
    """HF raises on the projected tokenizer (an unknown character and no unk_id): unexplained, not a
    TypeError (the generated zoo's `unigram-no-unk-projection` crashed here)."""
    why, hf = qwen
    text = "left\x03right"  # a trigger-only loss fires: the comparison would use the projection
    want = hf.encode(text, add_special_tokens=False).ids
    monkeypatch.setattr(type(why), "project_raw", lambda self, t, losses: want if not losses else None)
    monkeypatch.setattr(type(why), "of", lambda self, *p: [object()] if "patch" in p else [])
    assert why.raw(text, want, want[:-1]) == ()


def test_two_dropped_pre_tokenizers_project_together():
    """Both FixedLength of a Sequence are dropped (two patches removing [0] and [1]): applied one
    after the other, the second must still find its item (was IndexError: the reduced generated zoo)."""
    from mtok_export.ir import Tokenizer as IR
    from mtok_export.ir import models as M
    from mtok_export.ir import pre_tokenizers as P

    tok = IR(model=M.WordPiece({"[UNK]": 0, "abc": 1, "a": 2}, "[UNK]", "\x00\x00", 1 << 30),
             pre_tokenizer=P.Sequence((P.FixedLength(3), P.FixedLength(2))))
    low, lw = lower(tok, TARGETS[DEFAULT])
    why = Attribution(tok, low, lw)
    dropped = [x for x in why.of("patch") if x.code == "pre-tokenizer-dropped"]
    assert len(dropped) == 2
    assert why.project_raw("abc", dropped) == [1] and why.project_raw("abca", dropped) == [0]


def test_decode_int_maps_each_character_under_byte_level():
    """decode(int) with byte_level_ on a token the byte map does not cover whole: each character it
    covers becomes its byte (MNN 3.6.1 wrote 'caf\\xe9' for '▁café': the generated zoo's
    `byte-level-decoder-other-vocab`); a byte-level token is its bytes, as before."""
    from mtok_export.verify import emulate

    assert emulate.decode_id("\u2581caf\u00e9", None, True) == b" caf\xe9"
    assert emulate.decode_id("\u0120caf\u00c3\u00a9", None, True) == " café".encode()
    assert emulate.decode_id("\u2581caf\u00e9", None, False) == " café".encode()
    assert emulate.decode_id("\u2581caf\u00e9", "##", True) == "  café".encode()  # WordPiece: a space first
