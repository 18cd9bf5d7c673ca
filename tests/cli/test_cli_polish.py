"""CLI details from issue 13: --version, --quiet and --debug in every --help, one-line errors for
OS and internal errors, single escaping on stdout, MiB, and a sniffing error that says what the
file is not and what it looks like."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from mtok_export.dump.render import size
from mtok_export.dump.sanitize import show
from mtok_export.sniff import looks_like

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def mtok(*args, prog="mtok"):
    code = ("import sys; from mtok_export.cli import main, export_main; "
            f"sys.argv[0] = {prog!r}; (main if {prog!r} == 'mtok' else export_main)()")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)


@pytest.fixture(scope="module")
def qwen_mtok(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("q") / "q.mtok"
    assert mtok("convert", SAMPLES / "qwen-bpe", out, "--allow-lossy").returncode == 0
    return out


def test_version():
    r = mtok("--version")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0] == f"mtok-export {metadata.version('mtok-export')}"
    assert lines[1].startswith(f"MNN runtime: MNN {metadata.version('MNN')} (")
    # the tables' version (HF tokenizers'), not the running Python's
    assert lines[2] == (f"Unicode 9.0.0 (the normalization tables: HF tokenizers' version, from unicodedataplus "
                        f"{metadata.version('unicodedataplus')})")


@pytest.mark.parametrize("command", [("export",), ("inspect",), ("verify",), ("convert",), ("tables", "show"),
                                     ("tables", "diff"), ("lint-template",), ("chat",), ("losses",), ()])
def test_global_options_in_every_help(command):
    r = mtok(*command, "--help")
    assert r.returncode == 0, r.stderr
    for option in ("--debug", "--quiet", "--version"):
        assert option in r.stdout, (command, r.stdout)


def test_global_options_in_mtok_export_help():
    r = mtok("--help", prog="mtok-export")
    assert r.returncode == 0 and all(o in r.stdout for o in ("--debug", "--quiet", "--version", "--path"))


def test_quiet_prints_nothing_but_errors(qwen_mtok, tmp_path):
    r = mtok("inspect", qwen_mtok, "--quiet")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = mtok("-q", "inspect", tmp_path / "missing.mtok")
    assert r.returncode == 2 and r.stderr == f"error: {tmp_path / 'missing.mtok'}: cannot read (No such file or directory)\n"


def test_debug_anywhere_shows_the_traceback(tmp_path):
    r = mtok("inspect", tmp_path / "missing.mtok", "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr and "InputError" in r.stderr


def test_os_error_is_one_line_exit_2(monkeypatch, capsys):
    # An OSError no reader wrapped: the CLI's last line of defence names the file and the reason.
    from mtok_export import inspection
    from mtok_export.cli import main

    def broken(*a, **k):
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/data/x.mtok")

    monkeypatch.setattr(inspection, "inspect", broken)
    monkeypatch.setattr(sys, "argv", ["mtok", "inspect", "x.mtok"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: /data/x.mtok: Input/output error\n"


def test_internal_error_is_one_line_with_a_hint(monkeypatch, capsys):
    from mtok_export import inspection
    from mtok_export.cli import main

    def bug(*a, **k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(inspection, "inspect", bug)
    monkeypatch.setattr(sys, "argv", ["mtok", "inspect", "x.mtok"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: internal error: ZeroDivisionError: division by zero",
                                "  hint: rerun with --debug for the traceback, and report it"]


def test_inspect_escapes_once(qwen_mtok):
    out = mtok("inspect", qwen_mtok).stdout
    # The template holds the two characters backslash and n; the regex holds \r, \n and \p escapes.
    assert r"{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}" in out
    assert r"[^\r\n\p{L}\p{N}]?\p{L}+" in out
    assert "\\\\" not in out
    assert 'eos "<|im_end|>"' in out


def test_show_escapes_text_that_is_not_nfc():
    # Conjoining jamo look like the composed syllable on a terminal; NFC text is left alone.
    assert show("\u1100\u1161") == r"\u1100\u1161"
    assert show("\uac00 e\u0301") == "\uac00 e\\u0301"
    assert show("\uac00 \u00e9 a\\b") == "\uac00 \u00e9 a\\b"
    assert show("a\nb\u200b") == r"a\nb\u200b"


def test_sizes_are_binary_units():
    assert [size(n) for n in (1000, 2048, 3 * 1024 * 1024 + 1)] == ["1000 B", "2.0 KiB", "3.0 MiB"]


@pytest.mark.parametrize("head,want", [(b"", "an empty file"), (b"GGUF\x03\x00\x00\x00", "a GGUF file"),
                                       (b"\x1f\x8b\x08\x00", "gzip-compressed data"),
                                       (b'{"version": "1.0", "model": {}}', "a tokenizer.json"),
                                       (b'{"a": ["[", "x"], "b": 1}', "JSON with the keys a, b"),
                                       (b"hello world\nsecond", "text starting 'hello world'"),
                                       (bytes(range(256)), "binary data")])
def test_looks_like(head, want):
    assert looks_like(head).startswith(want)


def test_convert_random_file_names_what_it_is_not(tmp_path):
    f = tmp_path / "random.bin"
    f.write_bytes(bytes(range(256)) * 4)
    r = mtok("convert", f, tmp_path / "out.mtok")
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {f}: not a tokenizer file this tool recognizes (not mtok, legacy-txt, gguf")
    assert "sentencepiece, tokenizer.json" in r.stderr and "), and none is beside it;" in r.stderr
    assert r.stderr.rstrip().endswith("it looks like binary data")



def test_tables_do_not_wrap_without_a_terminal():
    """In a CI log (stdout a pipe, no COLUMNS) rich wrapped at 80 columns, a word of a cell per line;
    `COLUMNS` still chooses the width when set."""
    from mtok_export.losses import KINDS

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    code = "import sys; from mtok_export.cli import main; sys.argv[0] = 'mtok'; main()"
    run = lambda **extra: subprocess.run([sys.executable, "-c", code, "losses"], capture_output=True, text=True,  # noqa: E731
                                         env={**env, "PYTHONPATH": str(REPO), **extra}, timeout=300)
    r = run()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 + len(KINDS)  # the header, then one line per loss code
    for kind in KINDS.values():
        (line,) = [x for x in lines if x.split() and x.split()[0] == kind.code]
        assert " ".join(kind.summary.split()) in " ".join(line.split())
    assert len(run(COLUMNS="100").stdout.splitlines()) > 2 * len(lines)


@pytest.mark.parametrize("source, fmt", [("qwen-bpe/tokenizer.json", "tokenizer.json"),
                                         ("llama-spm/tokenizer.model", "sentencepiece")])
def test_inspect_of_a_tokenizer_source_says_what_it_is_and_what_to_run(source, fmt):
    # Was "section header at 0x00000000: header line 1 must be decimal integers, got b'{'".
    r = mtok("inspect", SAMPLES / source)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{SAMPLES / source}: a {fmt} file, a tokenizer source: `mtok inspect` reads the .mtok" in r.stderr
    assert f"hint: export it with `mtok-export --path {SAMPLES / source}`" in r.stderr
    assert "caused by:" in r.stderr and "section header at 0x00000000" in r.stderr  # the offset, still
    r = mtok("inspect", SAMPLES / source.split("/")[0])  # its folder: not an MNN model folder, but a source
    assert r.returncode == 2 and "not an MNN model folder" in r.stderr
    assert f"hint: it holds a tokenizer source: export it with `mtok-export --path {SAMPLES / source.split('/')[0]}`" \
        in r.stderr


def test_inspect_of_a_broken_mtok_still_names_the_offset(tmp_path):
    p = tmp_path / "text.mtok"
    p.write_bytes((SAMPLES / "text.txt").read_bytes())
    r = mtok("inspect", p)
    assert r.returncode == 2 and "section header at 0x00000000: header line 1 must be decimal integers" in r.stderr
    assert "hint" not in r.stderr
