"""Conformance: every shared-corpus tokenizer.json exported for MNN 3.6.1 and verified with the
real runtime on the built-in corpus plus the llama.cpp test strings.  Prints the parity table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.parity_table import COLUMNS, parity_rows

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
DIRS = sorted(d for d in (CORPUS / "tokenizers").glob("*") if (d / "tokenizer.json").is_file())
# Losses whose effect shows in raw ids on ordinary text; without them raw ids must be >= 99.5%.
RAW_AFFECTING = {"normalizer-table", "normalizer-approx", "whitespace-class", "bert-clean", "lowercase", "added-normalized",
                 "ignore-merges", "unigram-ties", "metaspace-first", "normalizer-dropped", "pre-tokenizer-dropped", "regex-unsupported",
                 "merged-with-previous", "split-behavior", "prefix-space"}
ROWS: dict[str, dict] = {}


pytestmark = pytest.mark.runtime  # every corpus tokenizer on the MNN runtime


@pytest.fixture(scope="module", autouse=True)
def table():
    yield
    if not ROWS:
        return
    from tests.support.summary import SUMMARY

    SUMMARY.append("")
    SUMMARY.append("parity on MNN 3.6.1 (built-in corpus + llama.cpp strings), k/n identical")
    SUMMARY.append(f"{'tokenizer':26} " + " ".join(f"{c:>16}" for c in COLUMNS) + "  unexplained")
    for name, row in sorted(ROWS.items()):
        cells = " ".join(f"{row['checks'].get(c, '-'):>16}" for c in COLUMNS)
        SUMMARY.append(f"{name:26} {cells}  {row['unexplained']:>11}   losses: {row['losses']}")


def _ratio(cell: str) -> float:
    k, n = map(int, cell.split("/"))
    return k / n


# Inputs of the other readers, one row each, against their independent reference (llama.cpp for a
# GGUF).  Where that reference finds what the old self-check could not, the row is an expected
# failure naming the finding (strict: a row that starts passing must drop its mark).
_LLAMA_CPP_FINDS: dict[str, str] = {}  # none left: llama.cpp's departures are recorded reader differences
OTHER = [pytest.param(CORPUS / "gguf" / f"ggml-vocab-{n}.gguf", id=f"ggml-vocab-{n}.gguf",
                      marks=[pytest.mark.xfail(reason=_LLAMA_CPP_FINDS[n], strict=True)] if n in _LLAMA_CPP_FINDS
                      else [])
         for n in ("gpt-2", "llama-spm", "phi-3", "bert-bge", "deepseek-coder", "deepseek-llm")]
# Gemma-4: the corpus has llama.cpp's test strings but no vocabulary; a small one in its shape
GEMMA4 = pytest.param("gemma4", id="gemma4 (small vocabulary in Gemma-4's GGUF shape)")


@pytest.mark.skipif(not DIRS, reason="shared corpus not found next to the repository")
@pytest.mark.parametrize("src", [pytest.param(d, id=d.name) for d in DIRS] + OTHER + [GEMMA4])
def test_conformance(src, tmp_path):
    if src == "gemma4":
        from tests.support.gemma4_vocab import gemma4_gguf

        (tmp_path / "src").mkdir()
        src = gemma4_gguf(tmp_path / "src" / "ggml-vocab-gemma4-small.gguf")
    row = parity_rows(src, tmp_path, testvectors=CORPUS / "testvectors")
    ROWS[src.name] = row
    report = row["report"]
    assert row["unexplained"] == 0, [(m.check, m.sample, m.text[:60]) for c in report.checks
                                     for m in c.mismatches if m.explanation is None][:5]
    codes = set(filter(None, row["losses"].split(",")))
    if not codes & RAW_AFFECTING:
        assert _ratio(row["checks"]["raw ids"]) >= 0.995
    if not codes & (RAW_AFFECTING | {"suffix-not-appended", "bos-template", "bos-none"}):
        assert row["checks"]["engine ids"].split("/")[0] == row["checks"]["engine ids"].split("/")[1]
    if "stream-decode" not in codes:
        assert _ratio(row["checks"]["streaming decode"]) >= 0.99
    for check in ("chat text", "chat ids"):
        if check in row["checks"] and not codes & (RAW_AFFECTING | {"added-strip-ascii"}):
            assert _ratio(row["checks"][check]) == 1.0
