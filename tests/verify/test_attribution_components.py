"""A dead end explains itself (issue 31, item 6): the component the first divergence of an unexplained
mismatch points at (`Attribution.component`), and the dead end lists only the options that change
that component (`cli.gate.outcome_options`), or none and what to report.  One mismatch per component
class, each built on a small tokenizer made here; the expected ids come from HF on the source."""

from __future__ import annotations

import pytest

from mtok_export.cli.gate import COMPONENT_OPTIONS, COMPONENT_REPORT, outcome_options
from mtok_export.formats import read_source
from mtok_export.lower import lower
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.attribution import COMPONENTS, Attribution
from tests.support.small_tokenizers import bare_vocab, byte_level_folder


@pytest.fixture(scope="module")
def bpe(tmp_path_factory) -> Attribution:
    tok = read_source(byte_level_folder(tmp_path_factory.mktemp("bpe")))
    low, lw = lower(tok, TARGETS[DEFAULT])
    return Attribution(tok, low, lw)


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Attribution:
    tok = read_source(bare_vocab(tmp_path_factory.mktemp("bert"), cased=False))
    low, lw = lower(tok, TARGETS[DEFAULT])
    return Attribution(tok, low, lw)


def _changed_at(ids: list[int], k: int, new: int) -> list[int]:
    return [*ids[:k], new, *ids[k + 1:]]


def test_each_class_points_at_its_component(bpe, bert):
    text = "Hello world, the test"
    want = bpe.project_raw(text, ())  # HF on the source: what a faithful runtime gives
    end = next(t.id for t in bpe.lowered.added_tokens if t.content == "<|endoftext|>")
    with_end = bpe.project_raw("Hello<|endoftext|>world", ())
    k = with_end.index(end)
    accented = "héllo wörld"
    swapped = want[1:2] + want[:1] + want[2:]
    cases = {
        "template": bpe.component("chat text", "[...]", "a", "b"),
        "bos/eos": bpe.component("engine ids", text, [0, *want], want, raw_matched=True),
        "decoder": bpe.component("streaming decode", text, "Hello", " Hello"),
        # the reference gives other ids than HF on this tool's reading: the reader
        "reader": bpe.component("raw ids", text, swapped, want),
        "added tokens": bpe.component("raw ids", "Hello<|endoftext|>world", with_end,
                                      _changed_at(with_end, k, with_end[k - 1])),
        "vocabulary": bpe.component("raw ids", text, want, _changed_at(want, 1, 10 ** 6)),
        # MNN's BERT normalizer keeps a line separator (U+2028) that HF's turns into a space
        "normalizer": bert.component("raw ids", "the\u2028the", bert.project_raw("the\u2028the", ()),
                                     [*bert.project_raw("the", ()), 1]),
        "split": bpe.component("raw ids", accented, bpe.project_raw(accented, ()), bpe.project_raw(accented, ())[::-1]),
        "model": bpe.component("raw ids", text, want, swapped),
    }
    assert cases == {c: c for c in cases}
    assert set(cases) == set(COMPONENTS) - {"interpretation"}  # that one: verify's interpretation finding


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_dead_end_lists_only_the_options_of_its_component(component):
    # a difference in the middle of the ids: no BOS/EOS shape to add options for
    options = outcome_options("raw ids", [1, 2, 3, 4, 5], [1, 2, 3, 9, 5], "mnn-3.6", component)
    mine = set(COMPONENT_OPTIONS.get(component, ()))
    assert set(options) == mine or (component == "bos/eos" and options and options[0].startswith("--bos"))
    others = {o for c, opts in COMPONENT_OPTIONS.items() if c != component for o in opts}
    assert not set(options) & others
    if not options:  # then the dead end says what to report
        assert COMPONENT_REPORT[component]


def test_bos_eos_options_follow_the_shape():
    assert outcome_options("engine ids", [15, 99, 2], [15, 99], "mnn-3.6", "bos/eos")[0].startswith("--target mnn-head")
    assert outcome_options("engine ids", [7, 15, 99], [15, 99], "mnn-3.6", "bos/eos")[0].startswith("--bos")
    # the template's doubled head: the template's options and --bos, nothing of the text pipeline
    head = outcome_options("chat ids", [5, 6, 9, 10], [5, 6, 5, 6, 9, 10], "mnn-3.6", "template")
    assert head[0].startswith("--bos") and head[1].startswith("--chat-template") and len(head) == 2
