"""The runtime-vs-reference compare loop (`verify.check.compare` / `compare_texts`)."""

from __future__ import annotations

import unicodedata
from types import SimpleNamespace

import pytest

from mtok_export import losses as L
from mtok_export.corpus import Sample
from mtok_export.verify.check import TEXT_CHECKS, Check, compare, compare_texts


def _sample(i, text="x"):
    return Sample(f"s{i}", text)


def test_compare_counts_and_records_losses_or_codes():
    c = Check("raw ids")
    assert compare(c, _sample(0), [1], [1], lambda: pytest.fail("explained a match")) is None
    loss = L.Loss(L.POST_DROPPED, "post_processor X", "$.post_processor", "why")
    assert compare(c, _sample(1), [1], [2], lambda: [loss]) == [loss]
    compare(c, _sample(2), "a", "b", lambda: ("type0-decode", "type0-decode"), slice="edge")
    compare(c, _sample(3), 0, 1)
    assert (c.ok, c.total) == (1, 4)
    got = [(m.sample, m.explanation, m.where, m.slice) for m in c.mismatches]
    assert got == [("s1", ("post-dropped",), ("$.post_processor",), "everyday"),
                   ("s2", ("type0-decode",), (), "edge"), ("s3", (), (), "everyday")]


def test_compare_texts_strips_only_the_prefix_the_runtime_added():
    samples = [_sample(0, "ab"), _sample(1, "ab"), _sample(2, "ab")]
    ref = SimpleNamespace(engine=[[1, 5, 6]] * 3, raw=[[5, 6]] * 3, decoded=["ab"] * 3)
    rt = SimpleNamespace(encodes=[[1, 5, 6], [5, 6], [1, 1, 5, 6]], decodes={5: b"a", 6: b"c"})
    seen = []

    def why(name):
        return lambda j, *args: seen.append((name, j)) or (f"{name}-{j}",)

    checks = {n: Check(n) for n in TEXT_CHECKS}
    compare_texts(checks, samples, rt, ref, [1], explain_raw=why("raw"), explain_engine=why("engine"),
                  explain_stream=why("stream"))
    raw, eng, stream = (checks[n] for n in TEXT_CHECKS)
    # sample 0 is exact; 1 lacks the prefix (raw equal, engine not); 2 has it twice (both differ)
    assert (raw.ok, eng.ok) == (2, 1) and [m.sample for m in raw.mismatches] == ["s2"]
    assert [m.got for m in raw.mismatches] == [[1, 5, 6]]
    assert [m.sample for m in eng.mismatches] == ["s1", "s2"]
    # the stream check joins the runtime's single-id decodes of the reference's raw ids: "ac" != "ab"
    assert stream.ok == 0 and stream.total == 3 and stream.mismatches[0].got == "ac"
    assert ("raw", 0) not in seen and ("raw", 2) in seen and ("engine", 1) in seen


def test_a_normalizer_loss_on_an_unnormalized_document_piece_counts_as_edge():
    """Issue 39: a document piece whose text is not in NFC (pointed Hebrew, its marks out of canonical
    order, as a real translation catalogue has it) is the edge slice's kind of input for a normalizer
    loss; any other loss there, and a normalizer loss on NFC text, counts as everyday (documents)."""
    from mtok_export.verify.check import Mismatch, counted_slice

    hebrew = "\u05e9\u05bc\u05b6"  # shin, dagesh (ccc 21), segol (ccc 20): NFC puts the segol first
    assert not unicodedata.is_normalized("NFC", hebrew)
    m = lambda text, codes: Mismatch("raw ids", "document-x@1", text, [1], [2], codes, "documents")  # noqa: E731
    assert counted_slice(m(hebrew, ("normalizer-approx",))) == "edge"
    assert counted_slice(m(hebrew, ("normalizer-approx", "stream-decode"))) == "documents"
    assert counted_slice(m("plain text", ("normalizer-approx",))) == "documents"
    assert counted_slice(Mismatch("raw ids", "s", hebrew, [1], [2], ("normalizer-approx",), "everyday")) == "everyday"


def test_a_stream_one_leading_space_off_counts_as_edge():
    """Issue 39: a streamed reply that differs by one leading space is the same characters to its
    reader; any other streamed difference, or the same texts on another check, counts on its slice."""
    from mtok_export.verify.check import Mismatch, counted_slice

    stream = lambda want, got: Mismatch("streaming decode", "s", "Hello", want, got, ("stream-decode",))  # noqa: E731
    assert counted_slice(stream("Hello", " Hello")) == "edge"
    assert counted_slice(stream(" Hello", "Hello")) == "edge"
    assert counted_slice(stream("Hello", "  Hello")) == "everyday"
    assert counted_slice(stream("Hello", "Hello ")) == "everyday"
    assert counted_slice(Mismatch("chat text", "s", "x", "Hello", " Hello", ("stream-decode",))) == "everyday"


def test_a_panic_in_the_reference_is_a_named_input_error():
    """tokenizers' Rust code can panic (Strip(' ', 1, 1) on the token ' ': a generated zoo shape);
    pyo3 raises that as PanicException, a BaseException: a named input error, not a traceback.  An
    interrupt still goes through."""
    from tokenizers import decoders

    from mtok_export.errors import InputError
    from mtok_export.verify.check import _ask

    ref = SimpleNamespace(files=["tokenizer.json"], library="tokenizers 0.23")
    with pytest.raises(InputError, match=r"reference \(tokenizers 0.23\) panicked"):
        _ask(ref, "", lambda tell: decoders.Strip(" ", 1, 1).decode([" "]))

    def interrupted(tell):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _ask(ref, "", interrupted)
