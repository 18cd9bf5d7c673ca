"""The three runtime forms of NFC/NFKC/charsmap normalizers (issue 17): Replace rules that compose
canonical pairs (default), the code-point rules alone (`normalizer_form="no-compose"`, faster) and
the code-point table MNN's exporter writes (`"table"`), each fast form with its loss recorded.
Checked on the real runtime against HF."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtok_export import losses as L
from mtok_export.ir import normalizers as N
from mtok_export.lower import Forms, lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.unicode.tables import charsmap_table, table
from mtok_export.verify.runtime import run_runtime
from tests.support.marks import needs_mnn

CORPUS = Path(__file__).resolve().parents[2].parent / "shared/corpus/tokenizers"


def _read(name):
    if not (CORPUS / name).is_dir():
        pytest.skip("shared corpus not found next to the repository")
    return read_model_dir(CORPUS / name)


@pytest.fixture(scope="module")
def qwen():
    return _read("qwen2.5-instruct")


def test_table_form_is_the_nfc_table_with_its_loss(qwen):
    fast, lw = lower(qwen, TARGETS[DEFAULT], forms=Forms(normalizer_form="table"))
    assert fast.normalizer == N.CodepointMap(table("NFC"))
    assert [x.code for x in lw.losses if x.kind.layer == "normalizer"] == [L.NORMALIZER_TABLE.code]
    exact, lw_exact = lower(qwen, TARGETS[DEFAULT])
    # the code-point rules as a guarded table (182 Replaces and the table), then the canonical pairs
    from mtok_export.lower.normalizers import composition_pairs
    kinds = [type(r).__name__ for r in exact.normalizer.normalizers]
    assert kinds == ["Replace"] * 182 + ["CodepointMap"] + ["Replace"] * len(composition_pairs())
    assert [x.code for x in lw_exact.losses if x.kind.layer == "normalizer"] == [L.NORMALIZER_APPROX.code]
    assert "ms per 30 KB" in " ".join(lw_exact.applied["unicode-replaces"])  # the measured cost is shown
    assert fast.model == exact.model and fast.pre_tokenizer == exact.pre_tokenizer
    singles, lw_singles = lower(qwen, TARGETS[DEFAULT], forms=Forms(normalizer_form="no-compose"))
    assert singles.normalizer.normalizers == exact.normalizer.normalizers[:183]
    assert [x.code for x in lw_singles.losses if x.kind.layer == "normalizer"] == [L.NORMALIZER_APPROX.code]
    assert "no-compose" in next(x.reason for x in lw_singles.losses if x.kind.layer == "normalizer")


def test_table_form_of_a_charsmap():
    t5 = _read("t5-small")
    fast, lw = lower(t5, TARGETS[DEFAULT], forms=Forms(normalizer_form="table"))
    assert fast.normalizer == N.CodepointMap(charsmap_table(t5.normalizer.precompiled_charsmap))
    assert L.NORMALIZER_TABLE.code in {x.code for x in lw.losses}


@pytest.mark.runtime
def test_forms_on_the_runtime_against_hf(qwen, tmp_path):
    """Composition and zero-width characters: the default form gives HF's ids; without composition,
    decomposed text differs; the table also turns ZWJ into a space.  On text that needs neither, every
    form gives HF's ids."""
    from tokenizers import Tokenizer

    hf = Tokenizer.from_file(str(CORPUS / "qwen2.5-instruct" / "tokenizer.json"))
    plain = ["Hello, world! Привет, мир. 你好，世界。 مرحبا بالعالم", "def f(x):\n    return x ** 2  # ok"]
    needs = ["cafe\u0301 nai\u0308ve", "a\u200db \U0001F468\u200d\U0001F469", "\u212b ohm \u2126"]
    out = {}
    for form in ("compose", "no-compose", "table"):
        path = tmp_path / form / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(lower(qwen, TARGETS[DEFAULT], forms=Forms(normalizer_form=form))[0]))
        out[form] = run_runtime(path, texts=plain + needs).encodes
    want = [hf.encode(t, add_special_tokens=False).ids for t in plain + needs]
    assert out["compose"] == want
    n = len(plain)
    assert out["no-compose"][:n] == want[:n] and out["no-compose"][n + 1:] == want[n + 1:]
    assert out["no-compose"][n] != want[n]  # cafe + U+0301 stays decomposed
    assert out["table"][:len(plain)] == want[:len(plain)]
    assert out["table"][n + 2] == want[n + 2]  # singletons (U+212B, U+2126) are in the table too
    assert out["table"][n] != want[n] and out["table"][n + 1] != want[n + 1]


def test_cli_table_form_is_written_and_recorded(tmp_path, cli):
    """`mtok export --normalizer-form table`: the file carries the table, the manifest the choice."""
    import json

    from mtok_export.mtok import read_mtok

    src = tmp_path / "src"
    src.mkdir()
    (src / "tokenizer.json").write_text(json.dumps({
        "version": "1.0", "added_tokens": [], "normalizer": {"type": "NFC"}, "pre_tokenizer": None,
        "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}))
    code, out, err = cli("mtok", "export", "--path", src, "-o", tmp_path / "out", "--no-verify", "--allow-lossy",
                         "--normalizer-form", "table")
    assert code == 0, out + err
    assert read_mtok((tmp_path / "out" / "tokenizer.mtok").read_bytes())[0].normalizer == N.CodepointMap(table("NFC"))
    manifest = json.loads((tmp_path / "out" / "tokenizer.mtok.json").read_text())
    assert "normalizer_form" in json.dumps(manifest) and "normalizer-table" in json.dumps(manifest)


@pytest.mark.runtime
def test_pairs_that_cannot_match_are_left_out():
    """Under NFKC, `ſ` is mapped to `s` before the pairs run, so `ſ` + U+0307 -> `ẛ` can never match:
    left out, with the 11 others of its kind; under NFC every pair can match.  Leaving them out
    changes nothing: the emulated runtime gives the same text as with every pair, on each left-out
    pattern alone, followed by every mark, and next to the pairs that share its characters."""
    from mtok_export.ir import Pattern
    from mtok_export.lower.normalizers import as_replaces, composition_pairs
    from mtok_export.verify import emulate

    pairs = composition_pairs()
    nfc, nfkc = as_replaces(table("NFC")), as_replaces(table("NFKC"))
    assert len(nfc.normalizers) == 183 + len(pairs)
    assert len(nfkc.normalizers) == 183 + len(pairs) - 12
    kept = {r.pattern.value for r in nfkc.normalizers if isinstance(r, N.Replace)}
    assert "\u017f\u0307" not in kept and "s\u0307" in kept
    every = N.Sequence(nfkc.normalizers[:183] + tuple(N.Replace(Pattern(a), b) for a, b in pairs))
    left_out = [a for a, _ in pairs if a not in kept]
    marks = sorted({a[-1] for a, _ in pairs})
    texts = left_out + [a + m for a in left_out for m in marks] + [" ".join(left_out + [a for a, _ in pairs])]
    assert [emulate.normalize(nfkc, t) for t in texts] == [emulate.normalize(every, t) for t in texts]


EVERY_CODE_POINT = "".join(chr(c) for c in range(1, 0x110000) if not 0xD800 <= c < 0xE000)


@pytest.mark.parametrize("form", ["NFC", "NFKC", "charsmap"])
def test_guarded_table_maps_every_code_point_as_one_replace_each(form):
    """The guarded table (`code_point_rules`: sentinels, guards, one code-6 table) gives the emulated
    runtime the same text as one Replace per entry, over every code point and next to each control
    character it guards; left unguarded, the table turns those into spaces, and a guard left out is
    caught the same way."""
    from mtok_export.ir import Pattern
    from mtok_export.lower.normalizers import code_point_rules
    from mtok_export.mtok.constants import TABLE_CONTROL_TO_SPACE
    from mtok_export.verify import emulate

    entries = charsmap_table(_read("t5-small").normalizer.precompiled_charsmap) if form == "charsmap" else table(form)
    each = N.Sequence(tuple(N.Replace(Pattern(chr(cp)), to) for cp, to in entries))
    rules = code_point_rules(entries)
    assert len(rules) == 2 * len(TABLE_CONTROL_TO_SPACE) + 1 and isinstance(rules[-1], N.CodepointMap)
    sentinels = [r.pattern.value for r in rules[:len(TABLE_CONTROL_TO_SPACE)]]
    controls = "".join(chr(c) for c in sorted(TABLE_CONTROL_TO_SPACE))
    texts = [EVERY_CODE_POINT, controls + "".join(sentinels), "".join(s + c for s, c in zip(sentinels, controls))]
    assert [emulate.normalize(N.Sequence(rules), t) for t in texts] == [emulate.normalize(each, t) for t in texts]
    assert emulate.normalize(rules[-1], controls) != emulate.normalize(each, controls)  # the unguarded table
    broken = N.Sequence(rules[:len(TABLE_CONTROL_TO_SPACE) + 5] + rules[len(TABLE_CONTROL_TO_SPACE) + 6:])
    assert emulate.normalize(broken, controls) != emulate.normalize(each, controls)


@needs_mnn
def test_guarded_table_on_the_runtime(qwen, tmp_path):
    """On MNN itself: every code point NFC maps, every guarded control character (alone and between
    letters), the sentinels and every 97th code point encode to the same ids under the guarded table
    as under one Replace per code point (the form before issue 27)."""
    from dataclasses import replace

    from mtok_export.ir import Pattern
    from mtok_export.lower.normalizers import composition_pairs
    from mtok_export.mtok.constants import TABLE_CONTROL_TO_SPACE

    exact = lower(qwen, TARGETS[DEFAULT])[0]
    pairs = tuple(N.Replace(Pattern(a), b) for a, b in composition_pairs())
    each = replace(exact, normalizer=N.Sequence(tuple(N.Replace(Pattern(chr(cp)), to) for cp, to in table("NFC"))
                                                + pairs))
    chars = [chr(cp) for cp, _ in table("NFC")] + [chr(c) for c in sorted(TABLE_CONTROL_TO_SPACE)]
    chars += list(EVERY_CODE_POINT[::97])
    texts = [" ".join(chars[i:i + 500]) for i in range(0, len(chars), 500)]
    texts += ["a" + chr(c) + "b" for c in sorted(TABLE_CONTROL_TO_SPACE)] + ["e\u0301\u200d\uf900\x01\u212b"]
    out = []
    for name, tok in (("guarded", exact), ("each", each)):
        path = tmp_path / name / "tokenizer.mtok"
        path.parent.mkdir()
        path.write_bytes(write_mtok(tok))
        out.append(run_runtime(path, texts=texts).encodes)
    assert out[0] == out[1]
