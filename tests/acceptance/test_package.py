"""The installable package's public face (issue 24): the API's annotations resolve to real types (no
`object` where one exists), `py.typed` ships, `LossError.hint` speaks the API's arguments to API callers
and the options to CLI users, and every command that prints a result has `--json`.  (`.ci/check-wheel`
builds the wheel and runs it from a fresh venv.)"""

from __future__ import annotations

import dataclasses
import json
import sys
import tomllib
import typing
from pathlib import Path

import pytest

import mtok_export
from mtok_export import api
from mtok_export.errors import LossError
from tests.support.commands import run_process

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
# bert-wordpiece's losses beyond edge inputs (its stream-decode cannot reach an encoder's user: issue 39)
REFUSED = ["suffix-not-appended"]


# ------------------------------------------------------------------ types

def _hints(obj) -> dict:
    from mtok_export import export as _  # noqa: F401  (the lazy API)
    from mtok_export.verify.check import Report  # export.py names it for type checkers only

    module = sys.modules[obj.__module__]
    return typing.get_type_hints(obj, globalns={**vars(module), "Report": Report})


@pytest.mark.parametrize("name", ["export", "verify", "inspect", "convert"])
def test_api_functions_have_resolvable_annotations(name):
    fn = getattr(api, name)
    hints = _hints(fn)
    assert "return" in hints and dataclasses.is_dataclass(hints["return"])
    assert fn.__doc__ and len(fn.__doc__) > 200  # documented


def test_result_fields_are_typed():
    from mtok_export.export import ExportResult
    from mtok_export.job import Job, VerifyOptions
    from mtok_export.deployed_file import InspectResult
    from mtok_export.ir import Tokenizer
    from mtok_export.lower import Lowering
    from mtok_export.mtok import Layout
    from mtok_export.policy import Decision
    from mtok_export.verify.check import Report

    for cls in (api.ConvertResult, api.VerifyResult, ExportResult, Job, VerifyOptions, InspectResult):
        hints = _hints(cls)
        assert hints and object not in hints.values(), (cls.__name__, hints)
        assert cls.__doc__
    assert _hints(api.VerifyResult) == {"report": Report, "decisions": list[Decision], "job": Job, "file": Path}
    exported = _hints(ExportResult)
    assert (exported["job"], exported["source"], exported["lowering"], exported["verify"]) == (
        Job, Tokenizer, Lowering, Report | None)
    assert _hints(InspectResult)["layout"] is Layout


def test_py_typed_ships():
    assert (Path(mtok_export.__file__).parent / "py.typed").is_file()
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "py.typed" in data["tool"]["setuptools"]["package-data"]["mtok_export"]


# ------------------------------------------------------------------ hints

@pytest.mark.runtime
def test_loss_error_hint_is_in_api_terms_for_api_callers(tmp_path):
    for call in (lambda: api.export(SAMPLES / "bert-wordpiece", tmp_path, verify_on_runtime=False),
                 lambda: api.convert(SAMPLES / "bert-wordpiece", tmp_path / "a.mtok")):
        with pytest.raises(LossError) as info:
            call()
        first, *rest = info.value.hint.splitlines()
        assert first == (f"pass accept={REFUSED!r} (or an accept_file listing them, checked into the "
                         "model repo); allow_lossy=True accepts every loss but a crash")
        assert not any(f in info.value.hint for f in ("--accept", "--allow-lossy", "--target"))
        assert all(line.split(":")[0] in REFUSED for line in rest)  # then, per code, what the end user sees
    # and the accept= it names does accept them
    assert api.export(SAMPLES / "bert-wordpiece", tmp_path, verify_on_runtime=False, accept=REFUSED).written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tokenizer.mtok", "tokenizer.mtok.json"]


@pytest.mark.runtime
@pytest.mark.parametrize("command", [("export", "--path"), ("convert",)])
def test_the_cli_hint_names_options(tmp_path, command):
    args = [*command, SAMPLES / "bert-wordpiece", *(["--output", tmp_path, "--no-verify"] if command[0] == "export"
                                                   else [tmp_path / "a.mtok"])]
    r = run_process("mtok", *args)
    assert r.returncode == 3, r.stderr
    assert f"  hint: accept them with --accept {','.join(REFUSED)} (or list them in an --accept-file" in r.stderr
    assert "accept=" not in r.stderr


# ------------------------------------------------------------------ --json everywhere

def test_every_command_that_prints_a_result_has_json():
    from mtok_export.cli import app
    from typer.main import get_command

    root = get_command(app)
    commands = [(name, cmd) for name, cmd in root.commands.items() if not hasattr(cmd, "commands")]
    commands += [(f"tables {n}", c) for n, c in root.commands["tables"].commands.items()]
    assert len(commands) >= 11
    missing = [name for name, cmd in commands if "--json" not in {o for p in cmd.params for o in p.opts}]
    assert missing == []


@pytest.mark.runtime
def test_convert_json(tmp_path):
    r = run_process("mtok", "convert", SAMPLES / "qwen-bpe", tmp_path / "q.mtok", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["command"], data["ok"], data["exit_code"], data["error"]) == ("mtok convert", True, 0, None)
    assert data["paths"] == [str(tmp_path / "q.mtok")] and data["size"] == (tmp_path / "q.mtok").stat().st_size
    assert data["refused"] == [] and all(x["code"] and x["json_path"] for x in data["losses"])
    # refused: exit 3, the losses and the refused codes, nothing written
    r = run_process("mtok", "convert", SAMPLES / "bert-wordpiece", tmp_path / "b.mtok", "--json")
    assert r.returncode == 3 and r.stderr == ""
    data = json.loads(r.stdout)
    assert data["refused"] == REFUSED and data["hint"].startswith("accept them with --accept ")
    assert set(REFUSED) <= {x["code"] for x in data["losses"]} and not (tmp_path / "b.mtok").exists()
    # an existing output: exit 2 with the reason
    r = run_process("mtok", "convert", SAMPLES / "qwen-bpe", tmp_path / "q.mtok", "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["error"] == f"{tmp_path / 'q.mtok'}: exists; pass --force to replace it"


@pytest.mark.runtime
def test_chat_json(tmp_path):
    assert run_process("mtok", "convert", SAMPLES / "qwen-bpe", tmp_path / "q.mtok", "-q").returncode == 0
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    plain = run_process("mtok", "chat", tmp_path / "q.mtok", "--messages", msgs)
    r = run_process("mtok", "chat", tmp_path / "q.mtok", "--messages", msgs, "--json")
    assert r.returncode == plain.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["command"], data["engine"], data["text"]) == ("mtok chat", "jinja2", plain.stdout)
    assert data["text"].endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    bad = run_process("mtok", "chat", tmp_path / "q.mtok", "--messages", tmp_path / "nope.json", "--json")
    assert bad.returncode == 2 and bad.stderr == ""
    data = json.loads(bad.stdout)
    assert data["ok"] is False and data["text"] is None and "nope.json" in data["error"]
