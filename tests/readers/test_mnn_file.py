"""An input MNN loads itself, exported to `.mtok` with no flags, verified against the runtime the
source was made for running the source file itself (`verify.reference_runtime`): a legacy
`tokenizer.txt` of each type (0-3) against MNN 3.4.1, a `.mtok` against MNN 3.6.1.  Exit 0, or
refused with a named loss (exit 3); never exit 1 (a difference nobody named) or 2 (the reference
failing).

The sources are what this tool writes from corpus tokenizers (`--format txt`).  The real old MNN
files in `../shared/corpus/mnn-legacy/` are pre-430 vocab files (no `430 N` header, no merges or
scores: see its README), which MNN 3.4.1 does not load; their outcome is checked below too."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from mtok_export.formats import read_source
from mtok_export.targets import build

CORPUS = Path(__file__).resolve().parents[3] / "shared/corpus"
# (source tokenizer, the legacy type its --format txt gets, outcome: exit code, refused loss codes)
CASES = {
    "llama2-7b-hf": (0, 3, {"stream-decode"}),  # 3.4.1 turns only a piece's first U+2581 into a space
    "falcon-7b": (1, 0, set()),
    "bert-base-uncased": (2, 0, set()),
    "gpt2": (3, 0, set()),
}


@pytest.fixture(scope="module")
def legacy_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("legacy")
    files = {}
    for name in CASES:
        d = out / name
        d.mkdir()
        (d / "tokenizer.txt").write_bytes(build(read_source(CORPUS / "tokenizers" / name), "txt")[0])
        files[name] = d / "tokenizer.txt"
    return files


@pytest.mark.runtime
@pytest.mark.parametrize("name", list(CASES))
def test_legacy_txt_exports_to_mtok(name, legacy_files, cli, tmp_path, monkeypatch, mnn341_python):
    monkeypatch.setenv("MTOK_MNN341_PYTHON", mnn341_python)
    kind, code, refused = CASES[name]
    src = legacy_files[name]
    assert src.read_bytes().startswith(f"430 {kind}\n".encode())
    rc, out, _ = cli("mtok-export", "--path", src, "--output", tmp_path / "out", "--json")
    outcome = json.loads(out)
    report = outcome["verify"]
    assert report["runtime"] == "3.6.1"
    assert report["unexplained"] == 0, [c for c in report["checks"] if c["unexplained"]]
    text = {c["name"]: c for c in report["checks"]}
    for check in ("engine ids", "raw ids", "streaming decode", "stop ids"):
        assert text[check]["total"] > 0, check
    assert (rc, outcome["exit_code"]) == (code, code)
    if code == 0:
        assert all(c["ok"] == c["total"] for c in report["checks"])  # every mismatch would be a loss
        assert (tmp_path / "out" / "tokenizer.mtok").is_file()
    else:
        assert {x["code"] for x in outcome["losses"]
                if x["severity"] != "edge" and not x["accepted_by"]} == refused
        assert not (tmp_path / "out" / "tokenizer.mtok").exists()


@pytest.mark.runtime
@pytest.mark.parametrize("name", ["llama2-7b-hf", "qwen2.5-instruct", "bert-base-uncased"])
def test_mtok_exports_to_mtok(name, cli, tmp_path, monkeypatch, mnn341_python):
    """A .mtok this tool wrote, exported again: the same behaviour as the source on MNN 3.6.1, its
    header prefix (Llama-2's BOS) and stop ids included, and its chat template's renders."""
    monkeypatch.setenv("MTOK_MNN341_PYTHON", mnn341_python)
    src = tmp_path / "in" / "tokenizer.mtok"
    src.parent.mkdir()
    src.write_bytes(build(read_source(CORPUS / "tokenizers" / name), "mtok")[0])
    rc, out, _ = cli("mtok-export", "--path", src, "--output", tmp_path / "out", "--json")
    outcome = json.loads(out)
    assert (rc, outcome["exit_code"]) == (0, 0), outcome["error"]
    checks = {c["name"]: c for c in outcome["verify"]["checks"]}
    for check in ("engine ids", "raw ids", "streaming decode", "stop ids") + (
            ("chat text", "chat ids") if name == "qwen2.5-instruct" else ()):
        assert 0 < checks[check]["ok"] == checks[check]["total"], check
    assert (tmp_path / "out" / "tokenizer.mtok").read_bytes()[:20] == src.read_bytes()[:20]  # same header


@pytest.mark.runtime
def test_mtok_reader_keeps_the_prefix_and_stops_through_lowering(tmp_path):
    """Read from a .mtok, the header prefix survives a second lowering (it was read as no
    post-processor and dropped: Llama-2's re-export lost BOS), and each stop id names its source."""
    from mtok_export.mtok import read_mtok

    data = build(read_source(CORPUS / "tokenizers/llama2-7b-hf"), "mtok")[0]
    tok = read_mtok(data)[0]
    assert tok.prefix_ids == (1,) and tok.meta.stop_sources == ((2, "mtok header"),)
    again, low, _ = build(tok, "mtok")
    assert low.prefix_ids == (1,) and again == data


def test_type0_reader_records_its_file_and_stops(legacy_files):
    """The type-0 reader names the file it read (verification runs the reference on it) and where
    each stop id came from, as the other legacy types do."""
    tok = read_source(legacy_files["llama2-7b-hf"])
    assert [Path(f.path) for f in tok.provenance.inputs] == [legacy_files["llama2-7b-hf"]]
    assert tok.meta.stop_sources == ((2, "legacy header"),)


@pytest.mark.parametrize("name", ["Llama2_7b_vocab.txt", "Qwen_7b_vocab.txt", "Chatglm2_6b_vocab.txt"])
def test_pre430_vocab_files_are_refused_as_input(name, cli, mnn341_python, tmp_path, monkeypatch):
    """The real old MNN files: one base64 token per line, no header, merges or scores.  MNN 3.4.1
    itself refuses them ("magic number is wrong"), so there is no runtime to verify an export
    against: bad input (exit 2) naming the file, nothing written."""
    monkeypatch.setenv("MTOK_MNN341_PYTHON", mnn341_python)
    src = tmp_path / "in" / name
    src.parent.mkdir()
    src.write_bytes((CORPUS / "mnn-legacy" / name).read_bytes())
    rc, out, _ = cli("mtok-export", "--path", src, "--output", tmp_path / "out", "--json")
    outcome = json.loads(out)
    assert rc == 2 and outcome["error"].startswith(f"{src}: not a tokenizer file")
    assert not (tmp_path / "out").exists()


@pytest.mark.runtime
def test_type1_bytes_no_token_starts_are_skipped(legacy_files, mnn341_python, tmp_path):
    """Type 1 read as WordPiece whose unk is no token: a word holding a byte no token starts with
    would be id -1 on the .mtok runtime, where MNN 3.4.1 skips the byte.  The ASCII ones (Falcon:
    \x03-\x05, \x0b, ...; none inside a token) are split out and removed, which is that skip; what
    is left (a lead byte of unassigned planes 8-11) is the named edge loss.  Attribution's HF
    projection, which refuses such a word, answers None instead of failing the export."""
    from mtok_export.verify.projection import Projection
    from mtok_export.verify.reference_runtime import runtime_reference
    from mtok_export.verify.runtime import run_runtime

    src = legacy_files["falcon-7b"]
    tok = read_source(src)
    data, _, lw = build(tok, "mtok")
    assert "wordpiece-skip-bytes" in lw.applied
    (loss,) = [x for x in lw.losses if x.code == "wordpiece-no-unk"]
    far = "\U00080000"  # UTF-8 f2 80 80 80: no token starts with f2
    assert loss.spans(f"a{far}b \x0b") == [(1, 2)]
    texts = ["a\x0bb", "\x03x\x04\x05", "ab", f"a{far}b"]
    (tmp_path / "tokenizer.mtok").write_bytes(data)
    got = run_runtime(tmp_path / "tokenizer.mtok", texts=texts).encodes
    ref = runtime_reference(src, Path(mnn341_python), texts, []).raw
    assert got[:3] == ref[:3] and -1 not in ref[0]
    assert got[3] != ref[3] and -1 in got[3]  # the loss
    hf = Projection(tok)
    assert hf.encode("a\x0bb") is None and hf.encode("ab") == ref[2]


@pytest.mark.runtime
def test_without_mnn341_the_export_is_a_refused_self_check(legacy_files, cli, mnn341_python, tmp_path, monkeypatch):
    """No MNN 3.4.1 here: verification falls back to the self-check, which the policy refuses by
    default (reference-unavailable), naming the command that creates the venv."""
    from mtok_export.verify import mnn341

    monkeypatch.setenv("MTOK_MNN341_PYTHON", mnn341_python)  # as the other exports here, then taken away
    monkeypatch.delenv(mnn341.ENV)
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "empty-cache"))
    rc, out, _ = cli("mtok-export", "--path", legacy_files["gpt2"], "--output", tmp_path / "out", "--json")
    outcome = json.loads(out)
    assert rc == 3
    ref = outcome["verify"]["reference"]
    assert ref["self_check"] is True and "not set up" in ref["why"]
    assert ref["install"] == mnn341.setup_command()
    assert "reference-unavailable" in {x["code"] for x in outcome["losses"]}
    assert not (tmp_path / "out" / "tokenizer.mtok").exists()
