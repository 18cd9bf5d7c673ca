"""Shared fixtures: the tokenizer directories under test (the shared corpus and `samples/`) and a
session cache of read -> lower -> write for each, so the expensive work happens once per run.

Any test that takes a `tokenizer_name` argument is parametrized over every directory that holds a
`tokenizer.json` (ids like `corpus/gpt2`, `samples/qwen-bpe`).

A test that starts the MNN runtime (`verify.runtime`), a reference library's heavy load or a
subprocess export is marked `runtime` (so are the corpus rows of a sweep and the tests that take
seconds), so `pytest -m "not runtime"` is the quick loop.  The runtime
marking cannot be forgotten: while a test without the marker runs (its set-up, call and tear-down,
in this process and in the processes it starts), `MTOK_TESTS_NO_RUNTIME` names a log that the
runtime launcher writes to before it refuses to start, and the test fails naming the command."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.corpus_dirs import CORPUS, TARGET, TOKENIZER_DIRS
from tests.support.legacy_runtime import mnn341_python  # noqa: F401  (session fixture: the MNN 3.4.1 interpreter)
from tests.support.marks import sweep_param
from tests.support.summary import SUMMARY

NO_RUNTIME = "MTOK_TESTS_NO_RUNTIME"


def pytest_configure(config):
    config.runtime_log = Path(tempfile.mkdtemp(prefix="mtok-tests-")) / "runtime-starts"


def pytest_unconfigure(config):
    shutil.rmtree(config.runtime_log.parent, ignore_errors=True)


def _refuse_runtime_unless_marked(item):
    """Around one phase of `item`: an unmarked test that starts the runtime fails, even when the
    refusal was caught (a CLI exit code, a child process)."""
    if item.get_closest_marker("runtime") is not None:
        os.environ.pop(NO_RUNTIME, None)
        return (yield)
    log = item.config.runtime_log
    log.unlink(missing_ok=True)
    os.environ[NO_RUNTIME] = str(log)
    try:
        result = yield
    finally:
        os.environ.pop(NO_RUNTIME, None)
    if log.exists():
        started = log.read_text(encoding="utf-8").splitlines()[0]
        pytest.fail(f"{item.nodeid} started the MNN runtime ({started}) but is not marked: add @pytest.mark.runtime",
                    pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _refuse_runtime_unless_marked(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _refuse_runtime_unless_marked(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    return (yield from _refuse_runtime_unless_marked(item))


def pytest_generate_tests(metafunc):
    if "tokenizer_name" in metafunc.fixturenames:
        # the shared corpus's rows read and lower some 80 tokenizers: out of the quick loop, which
        # keeps the samples' rows
        metafunc.parametrize("tokenizer_name", [sweep_param(name) for name in TOKENIZER_DIRS])


@dataclass(frozen=True)
class Exported:
    directory: Path
    source: object  # IR as read
    lowered: object  # IR after lower(TARGET)
    lowering: object  # lower.Lowering (losses, applied)
    data: bytes  # write_mtok(lowered)


class LoweredCorpus:
    """Lazy name -> Exported cache: a test that needs one tokenizer pays for that one only."""

    def __init__(self, dirs: dict[str, Path]):
        self.dirs = dirs
        self._cache: dict[str, Exported] = {}

    def __getitem__(self, name: str) -> Exported:
        if name not in self._cache:
            from mtok_export.lower import lower
            from mtok_export.mtok import write_mtok
            from mtok_export.readers.model_dir import read_model_dir
            from mtok_export.targets import TARGETS

            src = read_model_dir(self.dirs[name])
            low, lw = lower(src, TARGETS[TARGET])
            self._cache[name] = Exported(self.dirs[name], src, low, lw, write_mtok(low))
        return self._cache[name]

    def __iter__(self):
        return iter(self.dirs)

    def __len__(self):
        return len(self.dirs)


@pytest.fixture
def cli(monkeypatch, capsys):
    """In-process `mtok` / `mtok-export`: cli("mtok" | "mtok-export", *args) -> (exit code, stdout, stderr)
    (`tests.support.commands.run_here`, the one in-process runner)."""
    from tests.support.commands import run_here

    return lambda prog, *args: run_here(monkeypatch, capsys, prog, *args)


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def tokenizer_dirs() -> dict[str, Path]:
    return TOKENIZER_DIRS


@pytest.fixture(scope="session")
def lowered_corpus() -> LoweredCorpus:
    return LoweredCorpus(TOKENIZER_DIRS)


def pytest_sessionfinish(session):
    """A pytest-xdist worker hands its summary lines to the controller, which prints them."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["mtok_summary"] = list(SUMMARY)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    SUMMARY.extend(getattr(node, "workeroutput", {}).get("mtok_summary", ()))


def pytest_terminal_summary(terminalreporter):
    for line in SUMMARY:
        terminalreporter.write_line(line)
