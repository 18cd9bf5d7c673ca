"""What an export loads (issue 15: start-up cost).  `mtok-export --no-verify` of a tokenizer.json must not
import verification, the legacy text format, other formats' readers or the reference libraries, and on
a warm cache not jinja2 or tokenizers either (the chat template's depth and lowering, and whether HF tokenizers
compiles the split regexes, are cached by content); with
--quiet not rich, and `mtok --help` no library code and no rich.  Each run is a fresh process that
lists `sys.modules` at exit; the counter-cases (a cold cache, `--format txt`, a run that prints) show
that the listing sees those modules when they are used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "qwen-bpe"  # tokenizer.json with a chat template

RUN = """
import json, sys
from mtok_export.cli import main
sys.argv = ["mtok"] + json.loads(sys.argv[1])
try:
    main()
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

NEVER = ("mtok_export.verify.pipeline", "mtok_export.verify", "mtok_export.legacy", "mtok_export.lower.legacy",
         "mtok_export.readers.gguf", "mtok_export.readers.tekken", "mtok_export.readers.tiktoken",
         "mtok_export.readers.remote_code", "mtok_export.readers.bert_vocab", "mtok_export.readers.openai_bpe",
         "mtok_export.readers.gpt2_files", "mtok_export.compare.engines", "mtok_export.writers",
         "sentencepiece", "google.protobuf", "transformers", "tokenizers", "MNN", "numpy")


def other_readers() -> tuple[str, ...]:
    """The reader each format entry loads on first use (a function-local import of `readers.formats.X`),
    but the tokenizer.json entry's (the format these exports read) and what every reader shares
    (`readers.finish`): derived, so a new format's reader is checked too."""
    from tests.support.import_graph import edges

    entries = "mtok_export.readers.formats."
    return tuple(sorted({e.target for e in edges() if e.local and e.source.startswith(entries)
                         and e.target.startswith("mtok_export.readers.") and not e.target.startswith(entries)
                         and e.source != entries + "tokenizer_json"} - {"mtok_export.readers.finish"}))


NEVER += tuple(m for m in other_readers() if m not in NEVER)


def _modules(tmp_path: Path, cache: Path, *args: str, argv=None, sample=SAMPLE) -> set[str]:
    env = {**os.environ, "MTOK_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    argv = argv or ["--quiet", "export", "--path", str(sample), "-o", str(tmp_path / "out"), "--allow-lossy",
                    "--no-verify", *args]
    r = subprocess.run([sys.executable, "-c", RUN, json.dumps(argv)], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.splitlines()[-1])
    assert result["code"] == 0, r.stderr
    return set(result["modules"])


def _loaded(modules: set[str], prefix: str) -> bool:
    return any(m == prefix or m.startswith(prefix + ".") for m in modules)


@pytest.mark.runtime
def test_a_no_verify_export_loads_only_what_it_uses(tmp_path):
    cache = tmp_path / "cache"
    cold = _modules(tmp_path, cache)
    assert _loaded(cold, "jinja2") and _loaded(cold, "mtok_export.chat.lowering")  # the listing sees them
    warm = _modules(tmp_path, cache)
    assert (tmp_path / "out" / "tokenizer.mtok").is_file()
    # a cold cache compiles the Split regex with HF tokenizers (readers.regex_check), answered from the cache after
    assert _loaded(cold, "tokenizers") and [m for m in NEVER if _loaded(cold, m) and m != "tokenizers"] == []
    assert [m for m in NEVER + ("jinja2", "mtok_export.chat.lint", "mtok_export.chat.lowering", "rich")
            if _loaded(warm, m)] == []
    assert _loaded(warm, "mtok_export.readers.model_dir") and _loaded(warm, "mtok_export.mtok.codec")


@pytest.mark.runtime
def test_a_template_rendered_for_bos_placement_is_not_rendered_again(tmp_path):
    """llama-spm: BOS is a post-processor prefix, so the lowering renders the template over the
    built-in conversations (`chat.render.renders`, cached); its tokenizer.model is parsed to be
    classified (`readers.sentencepiece.is_sentencepiece`, cached)."""
    sample = SAMPLE.parent / "llama-spm"
    cold = _modules(tmp_path, tmp_path / "cache", sample=sample)
    assert _loaded(cold, "jinja2.sandbox") and (tmp_path / "cache" / "chat-renders").is_dir()
    warm = _modules(tmp_path, tmp_path / "cache", sample=sample)
    # nor protobuf: the tokenizer.model beside tokenizer.json is classified from the cache
    assert _loaded(cold, "google.protobuf")
    assert [m for m in ("jinja2", "mtok_export.verify.pipeline", "mtok_export.legacy", "google.protobuf",
                        "sentencepiece") if _loaded(warm, m)] == []


@pytest.mark.runtime
def test_the_legacy_format_is_loaded_when_written(tmp_path):
    modules = _modules(tmp_path, tmp_path / "cache", "--format", "txt")
    assert (tmp_path / "out" / "tokenizer.txt").is_file()
    assert _loaded(modules, "mtok_export.legacy") and _loaded(modules, "mtok_export.lower.legacy")
    assert not _loaded(modules, "mtok_export.verify.pipeline")


@pytest.mark.runtime
def test_a_run_that_prints_loads_rich_and_help_loads_neither_rich_nor_the_library(tmp_path):
    printing = _modules(tmp_path, tmp_path / "cache", argv=["export", "--path", str(SAMPLE), "-o",
                                                            str(tmp_path / "out"), "--allow-lossy", "--no-verify"])
    assert _loaded(printing, "rich.console") and _loaded(printing, "rich.table")
    assert not _loaded(printing, "rich.progress")  # no terminal: no bar
    helped = _modules(tmp_path, tmp_path / "cache", argv=["--help"])
    assert [m for m in ("rich", "mtok_export.export", "mtok_export.formats", "mtok_export.ir", "secrets",
                        "jinja2") if _loaded(helped, m)] == []


@pytest.mark.runtime
def test_a_command_run_alone_parses_and_prints_as_in_the_whole_app(monkeypatch, capsys):
    """`cli._narrowed`: the app holding only the command run must print the same help, usage errors
    and results as the whole app, for every command."""
    from mtok_export import cli
    from tests.support.commands import run_here

    def run(*argv):
        return run_here(monkeypatch, capsys, "mtok", *argv)

    names = [c.name for c in cli.app.registered_commands]
    assert len(names) >= 8 and "export" in names
    cases = [(n, "--help") for n in names] + [("export",), ("export", "--path", "/nonexistent", "--no-verify"),
                                              ("export", "--bogus"), ("inspect",), ("diff", "a")]
    narrowed = [run(*c) for c in cases]
    assert cli._narrowed(cli.app, ["mtok", "export"]) is not cli.app
    monkeypatch.setattr(cli, "_narrowed", lambda app, argv: app)
    whole = [run(*c) for c in cases]
    for case, a, b in zip(cases, narrowed, whole):
        assert a == b, case
    assert any("Usage: mtok export" in err for _, _, err in whole)  # usage errors are among the cases


def test_the_readers_never_loaded_are_derived_from_the_entries():
    """The derivation sees each entry's reader (the mutant: an import at the top of the tokenizer.json
    entry loading readers.tiktoken_json fails the export test above), and not the one these exports read."""
    derived = set(other_readers())
    assert {"mtok_export.readers.bert_vocab", "mtok_export.readers.gguf", "mtok_export.readers.tiktoken_json"} <= derived
    assert "mtok_export.readers.model_dir" not in derived and "mtok_export.readers.finish" not in derived
