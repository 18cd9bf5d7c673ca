"""Several models in one `mtok-export` (issue 24): which models `--path` names (several values, @LIST,
a folder of model folders), OUTPUT/<name>/ per model, the table, --report/--junit over every model,
the worst exit code, and Ctrl-C / SIGTERM stopping every job with nothing left behind."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.commands import run_process
from tests.support.processes import processes_with, wait_for
from mtok_export.reports import junit_cases, junit_fleet, worst_exit

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


@pytest.fixture
def models(tmp_path) -> Path:
    """models/{qwen-bpe,bert-wordpiece,t5-unigram}: copies of the samples, plus a README that is no model."""
    root = tmp_path / "models"
    for name in ("qwen-bpe", "bert-wordpiece", "t5-unigram"):
        shutil.copytree(SAMPLES / name, root / name)
    (root / "README.md").write_text("three models\n")
    (root / "notes").mkdir()  # a folder without a tokenizer: not a model
    (root / "notes" / "todo.txt").write_text("nothing\n")
    return root


def names(r: subprocess.CompletedProcess) -> list[str]:
    assert r.stdout.strip(), r.stderr
    return [m["name"] for m in json.loads(r.stdout)["models"]]


# ------------------------------------------------------------------ which models

@pytest.mark.runtime
def test_repeated_path_exports_every_model(models, tmp_path):
    # before issue 24, `--path A --path B` exported B alone, silently
    out = tmp_path / "out"
    r = run_process("mtok-export", "--path", models / "qwen-bpe", "--path", models / "bert-wordpiece", "--output", out,
                    "--no-verify", "--allow-lossy")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["bert-wordpiece", "qwen-bpe"]
    for name in ("qwen-bpe", "bert-wordpiece"):
        assert (out / name / "tokenizer.mtok").is_file() and (out / name / "tokenizer.mtok.json").is_file()
    # a line per model as it ends, then the table
    assert sorted(line.split(":")[0].split("] ")[1] for line in r.stderr.splitlines()
                  if line.startswith("[")) == ["bert-wordpiece", "qwen-bpe"]
    table = r.stdout.splitlines()
    assert table[0].startswith("2 model(s): exit 0")
    assert table[1].split() == ["model", "exit", "outcome", "losses", "checks", "seconds"]
    assert [row.split()[:3] for row in table[2:]] == [["qwen-bpe", "0", "passed"], ["bert-wordpiece", "0", "passed"]]


@pytest.mark.runtime
def test_the_bytes_are_those_of_a_single_export(models, tmp_path):
    single = tmp_path / "single"
    assert run_process("mtok-export", "--path", models / "t5-unigram", "--output", single, "--no-verify",
                       "--allow-lossy", "-q").returncode == 0
    r = run_process("mtok-export", "--path", models / "t5-unigram", models / "qwen-bpe", "--output", tmp_path / "out",
                    "--no-verify", "--allow-lossy", "-q")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""  # --quiet: no lines, no table
    assert (tmp_path / "out/t5-unigram/tokenizer.mtok").read_bytes() == (single / "tokenizer.mtok").read_bytes()


@pytest.mark.runtime
def test_several_values_a_list_file_and_a_folder_of_models_name_the_same_models(models, tmp_path):
    listed = tmp_path / "lists" / "models.txt"
    listed.parent.mkdir()
    # relative to the list's folder, comments and blank lines skipped, an absolute path as it is
    listed.write_text(f"# the fleet\n../models/bert-wordpiece\n\n{models / 'qwen-bpe'}  # absolute\n"
                      "../models/t5-unigram\n")
    common = ("--output", tmp_path / "out", "--no-verify", "--allow-lossy", "--json")
    by_values = run_process("mtok-export", "--path", models / "bert-wordpiece", models / "qwen-bpe",
                            models / "t5-unigram", *common)
    by_list = run_process("mtok-export", "--path", f"@{listed}", *common, cwd=tmp_path)
    by_folder = run_process("mtok-export", "--path", models, *common)
    expected = ["bert-wordpiece", "qwen-bpe", "t5-unigram"]
    assert names(by_values) == names(by_list) == expected
    assert names(by_folder) == sorted(expected)  # the folder's model subfolders, by name; notes/ is no model


@pytest.mark.runtime
def test_one_model_from_a_list_still_gets_its_own_folder(models, tmp_path):
    # a list (or a folder of models) is a fleet however long it is: the layout does not change as it grows
    listed = tmp_path / "one.txt"
    listed.write_text(f"{models / 'qwen-bpe'}\n")
    out = tmp_path / "out"
    r = run_process("mtok-export", "--path", f"@{listed}", "--output", out, "--no-verify", "--allow-lossy")
    assert r.returncode == 0, r.stderr
    assert (out / "qwen-bpe" / "tokenizer.mtok").is_file() and not (out / "tokenizer.mtok").exists()


@pytest.mark.runtime
def test_one_model_is_unchanged(models, tmp_path):
    out = tmp_path / "out"
    r = run_process("mtok-export", "--path", models / "qwen-bpe", "--output", out, "--no-verify", "--allow-lossy",
                    "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["export"]["output"] == str(out / "tokenizer.mtok")
    assert (out / "tokenizer.mtok").is_file()


@pytest.mark.runtime
@pytest.mark.parametrize("case", ["missing list", "empty list", "same name", "--input"])
def test_bad_model_lists_are_exit_2_before_any_work(models, tmp_path, case):
    out = tmp_path / "out"
    other = tmp_path / "elsewhere" / "qwen-bpe"
    shutil.copytree(models / "qwen-bpe", other)
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing yet\n\n")
    args, message = {
        "missing list": (["--path", f"@{tmp_path / 'nope.txt'}"], f"--path @{tmp_path / 'nope.txt'}: cannot read the list"),
        "empty list": (["--path", f"@{empty}"], f"--path @{empty}: the list names no model"),
        "same name": (["--path", models / "qwen-bpe", other], "are both named 'qwen-bpe'"),
        "--input": (["--path", models / "qwen-bpe", models / "t5-unigram", "--input", "tokenizer.json"],
                    "--input picks a file inside one --path"),
    }[case]
    r = run_process("mtok-export", *args, "--output", out, "--no-verify", "--report", tmp_path / "report.json")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: ") and message in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
    assert json.loads((tmp_path / "report.json").read_text())["exit_code"] == 2


# ------------------------------------------------------------------ outcomes

@pytest.mark.runtime
def test_mixed_outcomes_report_junit_table_and_the_worst_exit(models, tmp_path):
    """qwen-bpe passes, bert-wordpiece has a refused loss (3), broken is bad input (2): exit 2, and every
    model's outcome is in the report and the JUnit file, the same as a single export reports it."""
    broken = models / "broken"
    broken.mkdir()
    (broken / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [')
    shutil.rmtree(models / "t5-unigram")
    out = tmp_path / "out"
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    r = run_process("mtok-export", "--path", models, "--output", out, "--jobs", "2", "--report", report, "--junit",
                    junit)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    data = json.loads(report.read_text())
    assert data["exit_code"] == 2 and data["ok"] is False
    by_name = {m["name"]: m for m in data["models"]}
    assert {n: m["exit_code"] for n, m in by_name.items()} == {"bert-wordpiece": 3, "broken": 2, "qwen-bpe": 0}
    assert "tokenizer.json" in by_name["broken"]["error"]
    assert by_name["bert-wordpiece"]["hint"].startswith("accept them with --accept ")
    # the outputs: written, rejected, nothing
    assert (out / "qwen-bpe" / "tokenizer.mtok").is_file()
    assert (out / "bert-wordpiece" / "tokenizer.mtok.rejected").is_file()
    assert not (out / "bert-wordpiece" / "tokenizer.mtok").exists() and not (out / "broken").exists()
    # one suite per model; the totals are the suites' sums
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites"
    # each suite named after its model and output (several pipelines' models never collide), timed
    suites = {Path(s.get("name").removeprefix("mtok-export: ").split(" -> ")[0]).name: s for s in root}
    assert sorted(suites) == ["bert-wordpiece", "broken", "qwen-bpe"]
    assert all(s.get("name").startswith("mtok-export: ") and float(s.get("time")) >= 0 for s in root)
    for key in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(key)) == sum(int(s.get(key)) for s in root)
    assert suites["broken"].get("errors") == "1" and suites["qwen-bpe"].get("failures") == "0"
    refused = [d["code"] for d in by_name["bert-wordpiece"]["losses"] if d["accepted_by"] is None]
    assert refused and int(suites["bert-wordpiece"].get("failures")) == len(refused)
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[2:]}
    assert rows["broken"][1:3] == ["2", "bad"] and rows["bert-wordpiece"][1:3] == ["3", "refused"]
    assert rows["qwen-bpe"][1:3] == ["0", "passed"]
    # a single export of qwen-bpe reports the same outcome (the fleet adds name, source, seconds)
    alone = tmp_path / "alone.json"
    assert run_process("mtok-export", "--path", models / "qwen-bpe", "--output", tmp_path / "alone", "--report", alone,
                       "-q").returncode == 0
    single, fleet = json.loads(alone.read_text()), by_name["qwen-bpe"]
    for key in ("exit_code", "losses", "error", "hint"):
        assert fleet[key] == single[key]
    # the robustness phase grows its inputs until a time budget is spent: how many ran is the
    # machine's, not the outcome's; that none was unexplained is the outcome's
    robust = [{k: c[k] for k in ("name", "unexplained")} for r in (fleet, single) for c in r["verify"]["checks"]
              if c["name"] == "robustness"]
    assert robust == [{"name": "robustness", "unexplained": 0}] * 2
    assert [c for c in fleet["verify"]["checks"] if c["name"] != "robustness"] == \
        [c for c in single["verify"]["checks"] if c["name"] != "robustness"]
    assert {k: v for k, v in fleet["export"].items() if k not in ("output", "seconds")} == \
        {k: v for k, v in single["export"].items() if k not in ("output", "seconds")}


@pytest.mark.parametrize("codes,worst", [
    ([], 0), ([0, 0], 0), ([0, 3], 3), ([3, 1, 0], 1), ([1, 2, 3], 2), ([0, 2], 2), ([2, 130], 130), ([143, 0], 143),
])
def test_worst_exit(codes, worst):
    for order in itertools.permutations(codes):
        assert worst_exit(order) == worst


@pytest.mark.runtime
def test_junit_fleet_is_one_suite_per_model():
    ok = junit_cases("a", 0)
    bad = junit_cases("b", 2, error="b/tokenizer.json: not JSON")
    root = ET.fromstring(junit_fleet("mtok-export", [("a", ok, 1.0), ("b", bad, 2.0)]).encode())
    assert [(s.get("name"), s.get("tests"), s.get("errors")) for s in root] == [("a", "0", "0"), ("b", "1", "1")]
    assert root.get("tests") == "1" and root.get("errors") == "1"
    assert root.find("testsuite/testcase/error").get("message") == "b/tokenizer.json: not JSON"


# ------------------------------------------------------------------ stopping

def hung_runtime(tmp_path: Path) -> tuple[Path, str]:
    """A fake interpreter: the version check runs the real one (it has MNN), the runtime worker starts a
    background `sleep` and sleeps itself, forever.  -> (its path, the marker in the sleeps' command lines)."""
    marker = str(5000 + os.getpid() % 1000)
    script = tmp_path / "hung-python"
    script.write_text(f'#!/bin/sh\nif [ "$2" = "-c" ]; then exec {sys.executable} "$@"; fi\n'
                      f"sleep {marker}1 &\nexec sleep {marker}2\n")
    script.chmod(0o755)
    return script, marker






@pytest.mark.runtime
@pytest.mark.skipif(sys.platform != "linux", reason="process groups and ps as on Linux")
@pytest.mark.parametrize("how,code", [("ctrl-c", 130), ("sigterm", 143)])
def test_interrupt_stops_every_job_and_leaves_nothing(models, tmp_path, how, code):
    """Three models, two jobs: both runtimes hang; Ctrl-C (SIGINT to the terminal's whole process group)
    or SIGTERM (to the tool alone) ends both jobs, their runtimes and their temporary files, and the
    third model never starts."""
    script, marker = hung_runtime(tmp_path)
    tmp_root = tmp_path / "tmp"
    tmp_root.mkdir()
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_root)}
    code_line = "import sys; from mtok_export.cli import export_main; sys.argv[0] = 'mtok-export'; export_main()"
    proc = subprocess.Popen([sys.executable, "-c", code_line, "--path", models, "--output", out, "--jobs", "2",
                             "--allow-lossy", "--runtime-python", script, "--report", tmp_path / "report.json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                            start_new_session=True)
    try:
        assert wait_for(lambda: len(processes_with(f"sleep {marker}")) == 4, 60), "two runtimes never ran at once"
        assert any(out.rglob(".*.verifying"))  # each job's file under test exists while its runtime runs
        # The runtime's shell can start its sleeps before subprocess.Popen has returned in the job; a stop
        # inside Popen leaks the worker (verify/runtime.py's window, not the pool's): let them settle.
        time.sleep(0.5)
        if how == "ctrl-c":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted by "), stderr
    assert "Traceback" not in stderr and stdout == ""
    assert wait_for(lambda: not processes_with(f"sleep {marker}"), 10), processes_with(f"sleep {marker}")
    assert wait_for(lambda: not processes_with(str(out)), 10), processes_with(str(out))  # no job outlives it
    assert [p for p in out.rglob("*") if p.is_file()] == []  # no file under test, no partial output
    assert list(tmp_root.iterdir()) == []  # no runtime folder
    assert not (tmp_path / "report.json").exists()


def test_the_fleet_json_is_what_print_json_prints():
    # several models' outcomes are megabytes, which rich renders about as slowly as they are exported
    import contextlib
    import io

    from mtok_export.cli.console import _Console

    data = {"models": [{"name": "ä", "text": "a\u2028b\n\"q\"", "n": [1, 2.5, None, True], "empty": {}}]}
    fast, slow = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(fast):
        _Console(highlight=False, soft_wrap=True, emoji=False).write_json(data)
    _Console(highlight=False, soft_wrap=True, emoji=False, file=slow).print_json(json.dumps(data, ensure_ascii=False))
    assert fast.getvalue() == slow.getvalue()


@pytest.mark.skipif(sys.platform != "linux", reason="fork and signals as on Linux")
def test_a_job_that_dies_or_breaks_is_its_own_row_and_the_others_go_on():
    from mtok_export.cli.fleet import Model, run_pool

    def job(model):
        if model.name == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if model.name == "buggy":
            raise ZeroDivisionError("division by zero")
        return {"name": model.name, "exit_code": 0, "pid": os.getpid()}

    models = [Model(n, Path(n)) for n in ("a", "killed", "buggy", "b")]
    seen = []
    rows = run_pool(models, 2, job, seen.append)
    assert [r["name"] for r in rows] == ["a", "killed", "buggy", "b"]  # the models' order, not the finishing order
    assert sorted(r["name"] for r in seen) == ["a", "b", "buggy", "killed"]
    assert rows[0]["pid"] != os.getpid() and rows[0]["pid"] != rows[3]["pid"]  # each job its own process
    assert (rows[1]["exit_code"], rows[1]["error"]) == (
        2, "internal error: the export process was killed by SIGKILL before reporting")
    assert (rows[2]["exit_code"], rows[2]["error"]) == (2, "internal error: ZeroDivisionError: division by zero")
    suites = [s.get("name") for s in ET.fromstring(junit_fleet("t", [(r["suite"], r["junit"], r["seconds"])
                                                                     for r in rows[1:3]]))]
    assert suites == [rows[1]["suite"], rows[2]["suite"]] and "killed" in suites[0] and "buggy" in suites[1]


def _pool_of_two(tmp_path: Path, job: str, **popen) -> subprocess.Popen:
    """A Python process running `job` (the source of `def job(model)`, with `root` the test's folder,
    `time` and `signals` imported) for models a and b through run_pool, two at a time; it exits 3
    printing the name of the exception that stopped the pool."""
    code = (f"import sys, time\nfrom pathlib import Path\nfrom mtok_export import signals\n"
            f"from mtok_export.cli.fleet import Model, run_pool\nroot = Path({str(tmp_path)!r})\n{job}\n"
            "try:\n    run_pool([Model('a', root), Model('b', root)], 2, job)\n"
            "except BaseException as e:\n    print(type(e).__name__)\n    sys.exit(3)\n")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, **popen)


@pytest.mark.runtime
@pytest.mark.skipif(sys.platform != "linux", reason="fork and signals as on Linux")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_job_unwinds_even_through_except_exception(tmp_path, signum):
    """Reference, template and projection code catches Exception on purpose; a stop must not be one of
    them (an `Interrupted` raised in such code was swallowed, and the job ran on until SIGKILLed)."""
    proc = _pool_of_two(tmp_path, """
def job(model):
    (root / f"started-{model.name}").touch()
    try:
        while True:
            try:
                time.sleep(0.05)
            except Exception:  # what a reference engine's broad guard does
                pass
    finally:
        (root / f"started-{model.name}").unlink()
        (root / f"cleaned-{model.name}").touch()
""")
    try:
        assert wait_for(lambda: len(list(tmp_path.glob("started-*"))) == 2, 60)
        start = time.monotonic()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - start < 5  # not the STOP_SECONDS SIGKILL
    assert (proc.returncode, out.strip()) == (3, "Interrupted" if signum == signal.SIGTERM else "KeyboardInterrupt"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cleaned-a", "cleaned-b"]
    assert "Traceback" not in err


@pytest.mark.skipif(sys.platform != "linux", reason="fork and signals as on Linux")
def test_ctrl_c_twice_a_job_the_terminal_and_the_pool_does_not_cut_its_cleanup_short(tmp_path):
    """Ctrl-C reaches every job twice: the terminal's SIGINT to the process group, then the pool's own.
    The second arrives while the job unwinds from the first, which was raised inside the runtime run's
    nested handled(); it left export's `.verifying` file behind (CI, test_interrupt_stops_every_job)."""
    proc = _pool_of_two(tmp_path, """
def job(model):
    (root / f"file-{model.name}").touch()  # export's file under verification
    try:
        with signals.handled():  # as verify/runtime.py's _run_group around the runtime
            (root / f"waiting-{model.name}").touch()
            time.sleep(60)
    finally:
        time.sleep(1)  # the pool's SIGINT arrives here
        (root / f"file-{model.name}").unlink()
""", start_new_session=True)
    try:
        assert wait_for(lambda: len(list(tmp_path.glob("waiting-*"))) == 2, 60)
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert (proc.returncode, out.strip()) == (3, "KeyboardInterrupt"), err
    assert sorted(p.name for p in tmp_path.glob("file-*")) == []
    assert "Traceback" not in err


@pytest.mark.runtime
def test_each_model_folders_own_accept_file(models, tmp_path):
    """A fleet with one shared --accept-file (qwen-bpe's: nothing) where bert-wordpiece and t5-unigram
    hold their own reviewed lists as mtok-accept.txt: each model is judged by its own; without its
    file a model is judged by the shared one (t5-unigram, refused)."""
    shutil.copy(SAMPLES / "accept" / "bert-wordpiece.txt", models / "bert-wordpiece" / "mtok-accept.txt")
    shared = SAMPLES / "accept" / "qwen-bpe.txt"
    r = run_process("mtok-export", "--path", models, "--output", tmp_path / "out", "--accept-file", shared,
                    "--no-sweep", "--json")
    codes = {m["name"]: m["exit_code"] for m in json.loads(r.stdout)["models"]}
    assert codes == {"qwen-bpe": 0, "bert-wordpiece": 0, "t5-unigram": 3}, r.stderr
    shutil.copy(SAMPLES / "accept" / "t5-unigram.txt", models / "t5-unigram" / "mtok-accept.txt")
    own = models / "bert-wordpiece" / "mtok-accept.txt"
    own.write_text(own.read_text() + "prefix-space\n")  # a model's own file can go stale (the shared one cannot)
    r = run_process("mtok-export", "--path", models, "--output", tmp_path / "out", "--accept-file", shared,
                    "--no-sweep")
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[-1] == "passed (exit 0): 3 passed"  # the fleet's verdict: the last line
    assert [line.strip() for line in r.stderr.splitlines() if "warning:" in line] == [
        f"warning: {own} lists loss code(s) this export no longer records: prefix-space (remove them, or the next "
        "time such a loss comes back it passes unreviewed; --strict refuses a stale accept file)"]
