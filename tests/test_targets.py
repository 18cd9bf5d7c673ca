"""The targets carry their capabilities (`target.Target`, the entries in `targets.TARGETS`): the
passes ask what a runtime can do, never its name, so a made-up target gets the behaviour of its
capabilities; `--format`/`--target` resolve once; the refusal hint's alternatives come from the
capabilities; and the Strip capability is what the real MNN runtime does with the file."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, normalizers, processors

from mtok_export import losses as L
from mtok_export.api import export
from mtok_export.chat.lowering import lower_template
from mtok_export.cli.gate import outcome_options
from mtok_export.errors import InputError
from mtok_export.formats import read_source
from mtok_export.readers.formats.mnn import LEGACY, MTOK
from mtok_export.lower import lower
from mtok_export.mtok import read_mtok, write_mtok
from mtok_export.mtok.constants import NormalizerCode
from mtok_export.policy import Decision, refusal_hint
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS, build, names, runs_exactly, target_for
from tests.support.marks import needs_mnn

CORPUS = Path(__file__).resolve().parents[1].parent / "shared/corpus/tokenizers"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
MTOK_TARGETS = [n for n, t in TARGETS.items() if t.output is MTOK]


def _source(tmp_path: Path, *, strip: bool = False, suffix: bool = False):
    """A character BPE read back as our IR: a Strip normalizer and/or a `$A </s>` post-processor."""
    vocab = {c: i for i, c in enumerate("ab ")} | {"</s>": 3}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tk.add_special_tokens(["</s>"])
    if strip:
        tk.normalizer = normalizers.Strip()
    if suffix:
        tk.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 3)])
    d = tmp_path / "src"
    d.mkdir()
    tk.save(str(d / "tokenizer.json"))
    return read_model_dir(d), tk


def _codes(lw) -> set[str]:
    return {x.code for x in lw.losses}


# ------------------------------------------------------------------ the registry


def test_one_default_and_its_name():
    assert [n for n, t in TARGETS.items() if t.default] == [DEFAULT] == ["mnn-3.6"]


def test_output_format_and_capabilities_agree():
    """A legacy target writes tokenizer.txt and has no chat path; a .mtok one has the Jinja engine."""
    for t in TARGETS.values():
        assert (t.output is LEGACY) == t.legacy, t
        assert bool(t.jinja) == (not t.legacy), t


def test_names_per_output_format():
    assert names(MTOK)[:3] == ["mnn-3.6", "mnn-3.5", "mnn-head"]  # registry order; later runtimes after
    assert all(TARGETS[n].output is MTOK for n in names(MTOK))
    assert names(LEGACY) == ["mnn-legacy"]
    assert sorted(names()) == sorted([*names(MTOK), *names(LEGACY)])


@pytest.mark.parametrize("fmt,name,want", [("mtok", "mnn-3.5", "mnn-3.5"), ("mtok", "mnn-head", "mnn-head"),
                                           ("txt", DEFAULT, "mnn-legacy"), ("txt", "mnn-legacy", "mnn-legacy")])
def test_target_for(fmt, name, want):
    assert target_for(fmt, name) is TARGETS[want]


@pytest.mark.parametrize("fmt,name,output", [("mtok", "mnn-legacy", MTOK), ("mtok", "mnn-9", MTOK),
                                             ("txt", "mnn-9", LEGACY)])  # a name no format has is refused
def test_target_for_refuses_a_target_of_another_format(fmt, name, output):
    """The message lists the format's targets (`names`, checked above), never another's."""
    with pytest.raises(InputError) as e:
        target_for(fmt, name)
    assert str(e.value) == f"--target {name!r}: choose one of {', '.join(names(output))}"


def test_target_for_refuses_a_format_it_does_not_write():
    with pytest.raises(InputError, match=r"^--format 'json': choose mtok or txt$"):
        target_for("json", DEFAULT)


def test_lowering_holds_the_target_and_records_its_name(tmp_path):
    tok, _ = _source(tmp_path)
    for n in names():
        _, _, lw = build(tok, "txt" if TARGETS[n].legacy else "mtok", target=n)
        assert lw.target is TARGETS[n]


def test_lowering_functions_refuse_a_target_they_do_not_write_for(tmp_path):
    tok, _ = _source(tmp_path)
    with pytest.raises(ValueError, match="mnn-legacy writes a tokenizer.txt"):
        lower(tok, TARGETS["mnn-legacy"])
    with pytest.raises(ValueError, match="mnn-legacy has no Jinja engine"):
        lower_template("{{ x }}", TARGETS["mnn-legacy"])


@needs_corpus
@pytest.mark.parametrize("name", MTOK_TARGETS)
def test_where_no_capability_differs_every_mtok_target_writes_the_defaults_bytes(name):
    """Llama 2 has no Strip normalizer and no suffix: a target differs from the default only by
    what it can run, so each writes the default's file with the default's losses."""
    tok = read_source(CORPUS / "llama2-7b-hf")
    data, _, lw = build(tok, target=name)
    want, _, want_lw = build(tok, target=DEFAULT)
    assert data == want and lw.losses == want_lw.losses


# ------------------------------------------------------------------ the passes ask capabilities


def test_a_made_up_target_gets_the_behaviour_of_its_capabilities(tmp_path):
    """No pass looks at the name: the default renamed, or given mnn-3.5's normalizer codes or
    mnn-head's post program, lowers as the target with those capabilities does."""
    tok, _ = _source(tmp_path, strip=True, suffix=True)
    base = TARGETS[DEFAULT]
    renamed = replace(base, name="x-renamed", default=False)
    no_strip = replace(base, name="x-no-strip", normalizer_codes=base.normalizer_codes - {NormalizerCode.STRIP})
    appends = replace(base, name="x-appends", appends_suffix=True)
    assert write_mtok(lower(tok, renamed)[0]) == write_mtok(lower(tok, base)[0])
    assert _codes(lower(tok, renamed)[1]) == _codes(lower(tok, base)[1]) >= {"suffix-not-appended"}
    low, lw = lower(tok, no_strip)
    assert low.normalizer is None and "strip-3.5" in _codes(lw)
    assert [x.reason for x in lw.losses if x.code == "strip-3.5"] == [
        "x-no-strip has no Strip normalizer (code 8); dropped"]
    assert write_mtok(low) == write_mtok(lower(tok, TARGETS["mnn-3.5"])[0])
    low, lw = lower(tok, appends)
    assert "suffix-not-appended" not in _codes(lw) and low.post_processor.ops == (None, 3)


def test_strip_is_kept_for_the_targets_that_read_it(tmp_path):
    tok, _ = _source(tmp_path, strip=True)
    for n in MTOK_TARGETS:
        low, lw = lower(tok, TARGETS[n])
        reads = TARGETS[n].reads(NormalizerCode.STRIP)
        assert (low.normalizer is not None, "strip-3.5" in _codes(lw)) == (reads, not reads), n
        back = read_mtok(write_mtok(low), "t")[0]
        assert (back.normalizer is not None) == reads, n
    assert [n for n in MTOK_TARGETS if not TARGETS[n].reads(NormalizerCode.STRIP)] == ["mnn-3.5"]


@needs_mnn
def test_the_strip_capability_on_the_real_runtime(tmp_path):
    """MNN 3.6 runs the file written for mnn-3.6 like HF (it strips); the file for mnn-3.5 has no
    Strip, so the runtime keeps the spaces, as HF does without its normalizer: the loss is real."""
    from mtok_export.verify.runtime import run_runtime

    tok, hf = _source(tmp_path, strip=True)
    texts = [" a b", "ab", "  ba"]  # leading only: MNN 3.6.1 keeps trailing whitespace (strip_right unread)
    got = {}
    for n in ("mnn-3.6", "mnn-3.5"):
        path = tmp_path / f"{n}.mtok"
        path.write_bytes(build(tok, target=n)[0])
        got[n] = run_runtime(path, texts=texts).encodes
    assert got["mnn-3.6"] == [hf.encode(t).ids for t in texts]
    hf.normalizer = None
    assert got["mnn-3.5"] == [hf.encode(t).ids for t in texts] != got["mnn-3.6"]


# ------------------------------------------------------------------ alternatives from capabilities


def _decision(kind) -> Decision:
    return Decision(kind.code, kind.severity, True, None, [], 1, 0)


def test_the_hint_offers_the_target_with_the_capability():
    hint = refusal_hint([_decision(L.STRIP_35)], "mnn-3.5").splitlines()
    assert hint[-1] == ("strip-3.5: --target mnn-3.6 runs it exactly (it has the Strip normalizer; the file then "
                        "needs MNN >= 3.6.0)")
    hint = refusal_hint([_decision(L.SUFFIX_NOT_APPENDED)], "mnn-3.5", api=True).splitlines()
    assert hint[-1].startswith("suffix-not-appended: target='mnn-head' runs it exactly (it runs the post program")
    assert hint[-1].endswith("the file then needs MNN built from its main branch (no release runs the post program "
                             "yet))")


def test_an_alternative_writes_the_same_format_and_the_default_comes_first(monkeypatch):
    assert runs_exactly("suffix-not-appended", "mnn-legacy") is None  # no tokenizer.txt runs a post program
    assert runs_exactly("suffix-not-appended", "mnn-head") is None  # it has the capability itself
    assert runs_exactly("strip-whitespace", "mnn-3.5") is None  # no target runs it exactly
    assert runs_exactly("strip-3.5", "mnn-9") is None  # an unknown name: the default, which has Strip
    capable = replace(TARGETS[DEFAULT], name="x-first", default=False)
    reordered = {"x-first": capable, **TARGETS}  # a capable target before the default
    monkeypatch.setattr("mtok_export.targets.TARGETS", reordered)
    assert runs_exactly("strip-3.5", "mnn-3.5") is TARGETS[DEFAULT]
    monkeypatch.setattr("mtok_export.targets.TARGETS", {k: v for k, v in reordered.items() if k != "mnn-head"})
    assert runs_exactly("suffix-not-appended", "mnn-3.6") is None
    monkeypatch.setattr("mtok_export.targets.TARGETS", {**reordered, "x-appends": replace(capable, name="x-appends",
                                                                                        appends_suffix=True)})
    assert runs_exactly("suffix-not-appended", "mnn-3.5") is TARGETS["mnn-head"]  # registry order after the default


def test_a_missing_tail_points_at_the_target_that_appends_it():
    assert outcome_options("engine ids", [1, 2], [1], "mnn-3.5")[0] == (
        "--target mnn-head: that runtime appends the post-processor's suffix ids")
    assert outcome_options("engine ids", [1, 2], [1], "mnn-head")[0] == (
        "--runtime-python: a Python whose MNN is what mnn-head needs (MNN built from its main branch (no release "
        "runs the post program yet)); the one here does not run the post program")
    assert not any(x.startswith("--target") for x in outcome_options("engine ids", [1, 2], [1], "mnn-legacy"))


# ------------------------------------------------------------------ at the boundary


def test_the_manifest_records_the_targets_name_and_release(tmp_path):
    _source(tmp_path, strip=True)
    r = export(tmp_path / "src", tmp_path / "out", target="mnn-3.5", verify_on_runtime=False, allow_lossy=True)
    m = json.loads((tmp_path / "out/tokenizer.mtok.json").read_text(encoding="utf-8"))
    assert (m["target"], m["runtime_required"], r.lowering.target) == ("mnn-3.5", "MNN >= 3.5.0", TARGETS["mnn-3.5"])


# ------------------------------------------------------------------ what a runtime needs, typed


def test_the_manifest_prose_of_each_target_is_unchanged():
    """The typed ranges derive the text the manifests record (`runtime_required`): written out here as
    the registry had it when it was prose."""
    before = {"mnn-3.6": "MNN >= 3.6.0", "mnn-3.5": "MNN >= 3.5.0",
              "mnn-head": "MNN built from its main branch (no release runs the post program yet)",
              "mnn-legacy": "MNN 3.4.1 or earlier (a tokenizer.txt; later releases read it too)"}
    assert {n: TARGETS[n].requires for n in before} == before  # (entries added later have their own)


def test_the_ranges_admit_the_runtimes_that_verify_them():
    """A .mtok target runs on the release installed here (PyPI MNN 3.6.1, what `make setup` pins), which
    verifies it; the legacy target's tokenizer.txt runs on 3.4.1 (the legacy reference) and later
    releases alike; mnn-3.5's files on 3.5, not on 3.4.1 (no .mtok reader)."""
    from mtok_export.target_type import Version
    from mtok_export.verify import mnn341

    here, legacy = Version.parse("3.6.1"), Version.parse(mnn341.VERSION)
    existing = [TARGETS[n] for n in ("mnn-3.6", "mnn-3.5", "mnn-head", "mnn-legacy")]  # (not entries added later)
    assert [t.name for t in existing if not t.runs_on.admits(here)] == []
    assert [t.name for t in existing if t.runs_on.admits(legacy)] == ["mnn-legacy"]
    assert TARGETS["mnn-3.5"].runs_on.admits(Version.parse("3.5.0"))
    assert not TARGETS["mnn-3.6"].runs_on.admits(Version.parse("3.5.2"))


def test_every_engine_in_the_registry_has_lint_rules():
    """A .mtok target's engine is one whose rules exist (`chat.rules.rules_for` does not refuse it)."""
    from mtok_export.chat.rules import RULESETS

    assert {t.jinja.version for t in TARGETS.values() if t.jinja} <= set(RULESETS)
