"""Model losses whose projection must build in HF (`lower.models`, verify's `patch` projection): a patch
HF cannot load, or that leaves HF raising where the runtime answers, explained nothing and crashed the
attribution (the generated zoo's BPE continuing_subword_prefix and Unigram-without-unk shapes)."""

from __future__ import annotations

from mtok_export.ir import Tokenizer
from mtok_export.ir import models as M
from mtok_export.ir import pre_tokenizers as P
from mtok_export.lower import lower
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.attribution import Attribution


def _why(tok):
    low, lw = lower(tok, TARGETS[DEFAULT])
    return Attribution(tok, low, lw)


def test_continuing_subword_prefix_projects_as_the_runtime_joins_merges():
    """Without its prefix HF would build '##b##c' from the merge ('##b', '##c') and refuse to load;
    the projection keeps only the merges whose concatenation is a token, as the runtime joins them."""
    vocab = {"<unk>": 0, "a": 1, "b": 2, "##b": 3, "##c": 4, "ab": 5, "##bc": 6, "a##b": 7}
    tok = Tokenizer(model=M.BPE(vocab, (("a", "##b"), ("##b", "##c")), unk_token="<unk>",
                                continuing_subword_prefix="##"), pre_tokenizer=P.WhitespaceSplit())
    why = _why(tok)
    field = [x for x in why.losses if x.code == "bpe-field"]
    assert len(field) == 1
    assert why.project_raw("ab", ()) == [5]  # HF: 'a' '##b' merge into 'ab'
    assert why.project_raw("ab", field) == [1, 2]  # the runtime: 'a' 'b', which no merge joins


def test_unigram_without_unk_projects_with_unk_zero():
    tok = Tokenizer(model=M.Unigram((("a", -1.0), ("b", -2.0)), unk_id=None))
    why = _why(tok)
    unk = [x for x in why.losses if x.code == "unigram-unk"]
    assert len(unk) == 1 and unk[0].patch == ("$.model.unk_id", 0)
    assert why.project_raw("ab", ()) == [0, 1]
    assert why.project_raw("axb", ()) is None  # HF raises on 'x' without an unk_id
    assert why.project_raw("axb", unk) == [0, 1]  # unk 0 (HF fuses it with the "a" it now stands for)
