"""The generated zoo (issue 39.6, `tests/support/gen_zoo.py`): shapes drawn over tokenizers' component
space train and load in HF (a hypothesis property, shrinking a shape that does not); a seed gives the
same shapes; each class of dead end the generated zoo found, as its smallest shape, now exports with no
flags to exit 0 or a refusal naming its losses (never exit 1, a crash or a traceback); and a reduced
generated zoo (CI's; `make zoo` runs the full one) ends in no exit 1, no stall and no traceback."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import gen_zoo, zoo
from tests.support.marks import needs_mnn, runtime

TEXT = "Hello world, 你好 мир 123 ‘quotes’ <0x41> \u2581x"
CI_SEED, CI_COUNT = 39, 8  # 10-40 s an export (alone or on busy cores), two at a time: 1-2.5 min


@pytest.fixture(scope="module")
def lines():
    return gen_zoo.training_text()


@runtime  # trains a dozen tokenizers: about 20 s
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(data=st.data())
def test_every_drawn_shape_trains_and_loads_in_hf(data, lines):
    """A shape hypothesis draws (and shrinks) is a tokenizer HF builds, trains, serializes and reads
    back, with the components the shape names."""
    import json

    from tokenizers import Tokenizer

    shape = gen_zoo.shape(gen_zoo.HypothesisDraw(data))
    tok = gen_zoo.build(shape, lines)
    back = json.loads(Tokenizer.from_str(tok.to_str()).to_str())
    assert back["model"]["type"] == shape["model"]["type"]
    for part in ("normalizer", "pre_tokenizer", "decoder"):
        assert (back[part] is None) == (shape[part] is None), part
        if shape[part] is not None:
            assert back[part]["type"] == shape[part]["type"], part
    assert tok.get_vocab_size() >= min(shape["vocab_size"], 250)
    if not (shape["model"]["type"] == "Unigram" and not shape["model"]["unk"]):  # HF raises on an unknown character
        tok.encode(TEXT)


def test_a_seed_gives_the_same_shapes():
    assert gen_zoo.shapes(7, 20) == gen_zoo.shapes(7, 20)
    assert gen_zoo.shapes(7, 20) != gen_zoo.shapes(8, 20)
    kinds = {s["model"]["type"] for s in gen_zoo.shapes(1, 40)}
    assert kinds == {"BPE", "WordPiece", "WordLevel", "Unigram"}


def test_the_space_covers_every_component_type_tokenizers_serializes():
    """Every normalizer, pre-tokenizer, decoder and post-processor type tokenizers exports is drawn
    (Precompiled needs a SentencePiece charsmap: the real zoo's T5-like models carry it)."""
    from tokenizers import decoders, normalizers, pre_tokenizers, processors

    def types(c, key):
        if c is None:
            return set()
        return {c["type"]} | {t for x in c.get(key, ()) for t in types(x, key)}

    drawn = {k: set() for k in ("normalizer", "pre_tokenizer", "decoder", "post_processor")}
    keys = {"normalizer": "normalizers", "pre_tokenizer": "pretokenizers", "decoder": "decoders",
            "post_processor": "processors"}
    for s in gen_zoo.shapes(1, 400):
        for k in drawn:
            drawn[k] |= types(s[k], keys[k])
    exported = {
        "normalizer": {n for n in dir(normalizers) if n[0].isupper()} - {"Normalizer", "NORMALIZERS", "Precompiled"},
        "pre_tokenizer": {n for n in dir(pre_tokenizers) if n[0].isupper()} - {"PreTokenizer"},
        "decoder": {n for n in dir(decoders) if n[0].isupper()} - {"Decoder", "DecodeStream"},
        "post_processor": {n for n in dir(processors) if n[0].isupper()} - {"PostProcessor"},
    }
    for k in drawn:
        assert exported[k] <= drawn[k], (k, exported[k] - drawn[k])


def _first_attempt(folder, tmp):
    return zoo.attempt(zoo.Model(folder.name, "generated", folder), [], tmp, memory=gen_zoo.MEMORY,
                       cpu_seconds=gen_zoo.CPU_SECONDS)


def _no_dead_end(a: dict) -> None:
    assert zoo.broken(a) == "", a  # no stall (a kill), no traceback, no unnamed exit 2
    assert a["exit"] != 1, f"dead end: {a['error']} / {a['first_mismatch']}"
    if a["exit"] == 3:
        assert a["refused"], a  # refused by name


@needs_mnn
@pytest.mark.parametrize("name", sorted(gen_zoo.FOUND))
def test_each_class_found_exports_without_a_dead_end(name, tmp_path, lines):
    """The smallest shape of each class the generated zoo found (`gen_zoo.FOUND`: cause and fix in
    its text) exports with no flags to exit 0 or a named refusal; each was exit 1 (or an internal
    error) before its fix."""
    shape, _why = gen_zoo.FOUND[name]
    folder = gen_zoo.save(shape, tmp_path / name, lines)
    _no_dead_end(_first_attempt(folder, tmp_path))


@needs_mnn
def test_a_reduced_generated_zoo_has_no_dead_end_and_no_stall(tmp_path):
    """CI's generated zoo: CI_COUNT shapes of seed CI_SEED, each exported once with no flags, two at
    a time; `make zoo` runs the full one and tries the printed hints too."""
    start = time.perf_counter()
    gens, untrained = gen_zoo.generate(CI_SEED, CI_COUNT, tmp_path / "shapes")
    assert not untrained
    dirs = [tmp_path / f"t{g.index}" for g in gens]
    for d in dirs:
        d.mkdir()
    with ThreadPoolExecutor(max_workers=2) as pool:
        attempts = list(pool.map(lambda g, d: _first_attempt(g.folder, d), gens, dirs))
    for g, a in zip(gens, attempts):
        try:
            _no_dead_end(a)
        except AssertionError as e:
            raise AssertionError(f"shape {g.index:03d} {gen_zoo.label(g.shape)}: {e}") from None
    assert time.perf_counter() - start < 300
