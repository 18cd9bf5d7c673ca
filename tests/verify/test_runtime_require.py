"""A target's runtime range is checked against the verifying runtime before anything runs
(`verify.runtime.require_runtime`): the release comes from the interpreter's package metadata (a fake
interpreter here is a script that prints one), a release outside the range is an exit-2 `error:` line
naming the target, its range, the release found and what to do, and nothing is read, lowered or run
on the runtime first (these tests are not marked `runtime`: conftest fails any that starts it, and
each also records the reader and the worker).  `--no-verify` skips the check."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from mtok_export.verify import pipeline as verification
from mtok_export.cli import main
from mtok_export.errors import InputError
from mtok_export.job import Job, VerifyOptions
from mtok_export.target_type import RuntimeRange
from mtok_export.targets import TARGETS, build
from mtok_export.verify import runtime

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "qwen-bpe"


def _fake_python(tmp_path: Path, release: str, rc: int = 0) -> Path:
    """An 'interpreter' whose MNN package is `release`: it prints it whatever it is asked, and counts its runs."""
    script = tmp_path / f"python-{release or 'none'}"
    script.write_text(f"#!/bin/sh\necho run >> '{script}.runs'\nprintf '%s' '{release}'\nexit {rc}\n")
    script.chmod(0o755)
    return script


def _runs(fake: Path) -> int:
    log = Path(f"{fake}.runs")
    return len(log.read_text().splitlines()) if log.exists() else 0


def _mtok(capsys, monkeypatch, *args) -> tuple[int, str]:
    """`mtok ARGS` in this process, as the console script runs it: (exit code, stderr)."""
    monkeypatch.setattr("sys.argv", ["mtok", *map(str, args)])
    with pytest.raises(SystemExit) as e:
        main()
    return e.value.code, capsys.readouterr().err


@pytest.fixture
def needs_99(monkeypatch):
    """A made-up .mtok target that needs a release no one has."""
    t = dataclasses.replace(TARGETS["mnn-3.6"], name="mnn-99", runs_on=RuntimeRange.parse(">= 99"), default=False)
    monkeypatch.setitem(TARGETS, "mnn-99", t)
    return t


@pytest.fixture
def nothing_runs(monkeypatch):
    """Records every source read and every runtime worker start."""
    calls = []
    read = Job.read_source
    monkeypatch.setattr(Job, "read_source", lambda self: calls.append("read") or read(self))
    monkeypatch.setattr(runtime, "_run_worker", lambda *a, **k: calls.append("worker") or pytest.fail("worker"))
    return calls


# ------------------------------------------------------------------ the probe


def test_the_release_of_another_interpreter_is_its_package_metadata(tmp_path):
    fake = _fake_python(tmp_path, "3.7.2")
    assert runtime.installed_version(fake) == "3.7.2"
    assert runtime.installed_version(fake) == "3.7.2" and _runs(fake) == 1  # asked once per process


@pytest.mark.parametrize("release,rc", [("", 0), ("3.7.2", 1)])
def test_no_release_when_the_interpreter_has_no_mnn(tmp_path, release, rc):
    assert runtime.installed_version(_fake_python(tmp_path, release, rc)) is None
    assert runtime.installed_version(tmp_path / "no-such-python") is None


def test_this_interpreters_release_is_read_without_a_process():
    """The default runtime is this interpreter: its metadata, no process (none is allowed here)."""
    import importlib.metadata

    assert runtime.installed_version() == importlib.metadata.version("MNN")


# ------------------------------------------------------------------ the comparison


def test_a_release_in_range_goes_on(tmp_path):
    assert runtime.require_runtime(TARGETS["mnn-3.6"], _fake_python(tmp_path, "3.7.0")) == "3.7.0"
    assert runtime.require_runtime(TARGETS["mnn-legacy"], _fake_python(tmp_path, "3.4.1")) == "3.4.1"


@pytest.mark.parametrize("release", ["unknown", ""])
def test_a_runtime_with_no_release_number_is_not_refused_here(tmp_path, release):
    """Nothing to compare: the run goes on, and the runtime's start says what is wrong, as before."""
    assert runtime.require_runtime(TARGETS["mnn-3.6"], _fake_python(tmp_path, release)) == (release or None)


def test_a_release_out_of_range_is_refused_naming_what_to_do(tmp_path):
    fake = _fake_python(tmp_path, "3.5.2")
    with pytest.raises(InputError) as e:
        runtime.require_runtime(TARGETS["mnn-3.6"], fake)
    assert e.value.exit_code == 2
    assert str(e.value) == (
        f"--target mnn-3.6 needs MNN >= 3.6.0, and the runtime that would verify it, --runtime-python {fake}, has "
        "MNN 3.5.2: pass --runtime-python with a Python whose MNN is >= 3.6.0, or choose --target mnn-3.5 (runs on "
        "3.5.2), or --no-verify to write it unverified")


def test_a_note_is_shown_beside_the_range(tmp_path):
    with pytest.raises(InputError, match=r"^--target mnn-head needs MNN >= 3\.6\.0 \(MNN built from its main branch"):
        runtime.require_runtime(TARGETS["mnn-head"], _fake_python(tmp_path, "3.4.1"))


def test_no_other_target_runs_there(tmp_path, needs_99):
    with pytest.raises(InputError) as e:
        runtime.require_runtime(TARGETS["mnn-3.5"], _fake_python(tmp_path, "3.4.1"))
    assert "choose --target" not in str(e.value) and str(e.value).endswith(", or --no-verify to write it unverified")


# ------------------------------------------------------------------ before anything runs


def test_the_export_is_refused_before_anything_is_read_or_run(tmp_path, needs_99, nothing_runs, capsys, monkeypatch):
    out = tmp_path / "out"
    rc, err = _mtok(capsys, monkeypatch, "export", "--path", SAMPLE, "-o", out, "--target", "mnn-99")
    assert rc == 2, err
    assert err.startswith("error: --target mnn-99 needs MNN >= 99, and the runtime that would verify it, "
                          "this Python"), err
    assert "has MNN 3.6.1" in err and "choose --target mnn-3.6 or mnn-3.5 or mnn-head" in " ".join(err.split())
    assert nothing_runs == [] and not (out / "tokenizer.mtok").exists()


def test_a_runtime_python_out_of_range_is_refused_before_it_loads_mnn(tmp_path, nothing_runs, capsys, monkeypatch):
    """The metadata probe runs first: the interpreter is never asked to import MNN (`check_python`
    would start it through the runtime launcher, which conftest forbids here)."""
    fake = _fake_python(tmp_path, "3.5.0")
    rc, err = _mtok(capsys, monkeypatch, "export", "--path", SAMPLE, "-o", tmp_path / "out", "--runtime-python", fake)
    assert rc == 2 and err.startswith("error: --target mnn-3.6 needs MNN >= 3.6.0"), err
    assert nothing_runs == [] and _runs(fake) == 1


def test_no_verify_skips_the_check(tmp_path, needs_99, capsys, monkeypatch):
    out = tmp_path / "out"
    rc, err = _mtok(capsys, monkeypatch, "export", "--path", SAMPLE, "-o", out, "--target", "mnn-99", "--no-verify",
                    "--allow-lossy")
    assert rc == 0, err
    assert json.loads((out / "tokenizer.mtok.json").read_text())["runtime_required"] == "MNN >= 99"


def test_verification_refuses_before_the_corpus_runs(tmp_path, needs_99, monkeypatch):
    """`mtok verify` reaches `verification.run` with the recorded target: refused before the checks."""
    ran = []
    monkeypatch.setattr(verification, "verify", lambda *a, **k: ran.append(a) or pytest.fail("ran"))
    tok = Job.build(SAMPLE).read_source()
    _, low, lw = build(tok, target="mnn-99")
    with pytest.raises(InputError, match="^--target mnn-99 needs MNN >= 99"):
        verification.run(tmp_path / "tokenizer.mtok", tok, low, lw, VerifyOptions())
    assert ran == []
