"""Shared fixtures: the tokenizer directories under test (the shared corpus and `samples/`) and a
session cache of read -> lower -> write for each, so the expensive work happens once per run.

Any test that takes a `tokenizer_name` argument is parametrized over every directory that holds a
`tokenizer.json` (ids like `corpus/gpt2`, `samples/qwen-bpe`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
SAMPLES = REPO / "samples"
TARGET = "mnn-3.6"


def find_tokenizer_dirs() -> dict[str, Path]:
    """name -> directory, for every corpus/sample directory with a tokenizer.json."""
    out = {}
    for prefix, root in (("corpus", CORPUS), ("samples", SAMPLES)):
        if root.is_dir():
            for d in sorted(p for p in root.iterdir() if (p / "tokenizer.json").is_file()):
                out[f"{prefix}/{d.name}"] = d
    return out


TOKENIZER_DIRS = find_tokenizer_dirs()


def pytest_generate_tests(metafunc):
    if "tokenizer_name" in metafunc.fixturenames:
        metafunc.parametrize("tokenizer_name", list(TOKENIZER_DIRS), ids=list(TOKENIZER_DIRS))


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


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def tokenizer_dirs() -> dict[str, Path]:
    return TOKENIZER_DIRS


@pytest.fixture(scope="session")
def lowered_corpus() -> LoweredCorpus:
    return LoweredCorpus(TOKENIZER_DIRS)


# Lines tests want shown after the run (e.g. the conformance parity table); printed once capture ends.
SUMMARY: list[str] = []


def pytest_terminal_summary(terminalreporter):
    for line in SUMMARY:
        terminalreporter.write_line(line)
