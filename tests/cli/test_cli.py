"""The `mtok` and `mtok-export` command lines: help, exit codes (0 ok, 2 bad input, 3 lossy export
refused), `error:` lines without tracebacks, `--json` reports, and `inspect` output that never
lets token text act as terminal control or rich markup.

Most tests call the real entry points (`main`, `export_main`) in-process with a patched argv, so
the `_run` error mapping is exercised exactly as installed; `--help` also runs the console scripts.
The global options (--quiet, --debug in every --help), one-line OS and internal errors, single
escaping on stdout and the sniffing error that says what a file is not run `mtok` in a child
process (issue 13)."""

from __future__ import annotations

import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mtok_export.formats import FORMATS
from mtok_export.ir import AddedToken, Tokenizer
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.mtok import write_mtok

from tests.support.commands import run_process
from tests.support.corpus_dirs import REPO, SAMPLES
from tests.support.spec_example import SPEC_2_10

BIN = Path(sys.executable).parent


def write_dir(path: Path, tokenizer: dict, **files) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    for name, data in files.items():
        (path / name.replace("__", ".")).write_text(json.dumps(data), encoding="utf-8")
    return path


LOSSLESS = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}}
LOSSY = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]},
         "normalizer": {"type": "NFKC"}, "decoder": None}


# ---------------------------------------------------------------- help and usage

@pytest.mark.runtime
def test_console_scripts_help():
    r = subprocess.run([str(BIN / "mtok"), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "export" in r.stdout and "inspect" in r.stdout
    r = subprocess.run([str(BIN / "mtok-export"), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for opt in ("--path", "--output", "--target", "--allow-lossy", "--bos", "--chat-template", "--no-verify",
                "--json"):
        assert opt in r.stdout, opt
    assert "Exit codes" in r.stdout


def test_subcommand_help(cli):
    code, out, _ = cli("mtok", "inspect", "--help")
    assert code == 0 and "--section" in out and "--json" in out


@pytest.mark.parametrize("args", [["--bogus"], []], ids=["unknown-option", "missing-path"])
def test_usage_error_is_exit_2_without_traceback(cli, args):
    code, out, err = cli("mtok-export", *args)
    assert code == 2 and "Traceback" not in err


# ---------------------------------------------------------------- export

def test_export_missing_dir(cli, tmp_path):
    code, out, err = cli("mtok-export", "--path", tmp_path / "nope", "--no-verify")
    assert code == 2
    assert err.startswith("error: ") and "nope: no such file or directory" in err
    assert "Traceback" not in err


def test_export_dir_without_tokenizer_json(cli, tmp_path):
    code, _, err = cli("mtok-export", "--path", tmp_path, "--no-verify")
    assert code == 2 and err.startswith("error: ") and "no tokenizer.json" in err


def test_export_malformed_tokenizer_json(cli, tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": {', encoding="utf-8")
    code, _, err = cli("mtok-export", "--path", tmp_path, "--no-verify")
    assert code == 2
    assert err.startswith("error: ") and str(tmp_path / "tokenizer.json") in err and "not valid JSON" in err
    assert "Traceback" not in err
    assert not (tmp_path / "tokenizer.mtok").exists()


def test_export_unsupported_component_names_json_path(cli, tmp_path):
    write_dir(tmp_path, {**LOSSLESS, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Nope"}]}})
    code, _, err = cli("mtok-export", "--path", tmp_path, "--no-verify")
    assert code == 2 and "$.pre_tokenizer.pretokenizers[0].type" in err and "Traceback" not in err


@pytest.mark.parametrize("opt", ["--target", "--bos", "--header-specials", "--normalizer-form"])
def test_export_bogus_choice(cli, tmp_path, opt):
    write_dir(tmp_path, LOSSLESS)
    code, _, err = cli("mtok-export", "--path", tmp_path, opt, "bogus", "--no-verify")
    assert code == 2 and err.startswith(f"error: {opt} 'bogus': choose one of")
    assert not (tmp_path / "tokenizer.mtok").exists()


def test_export_lossless_writes(cli, tmp_path):
    src, out_dir = write_dir(tmp_path / "src", LOSSLESS), tmp_path / "out"
    code, out, err = cli("mtok-export", "--path", src, "-o", out_dir, "--no-verify", "--no-chat")  # no template
    assert code == 0, err
    assert "wrote" in out and str(out_dir / "tokenizer.mtok") in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["tokenizer.mtok", "tokenizer.mtok.json"]  # + manifest
    assert (out_dir / "tokenizer.mtok").read_bytes().startswith(b"430 4\n0 0 0\n\n")


def test_export_default_output_is_the_source_dir(cli, tmp_path):
    write_dir(tmp_path, LOSSLESS)
    code, _, _ = cli("mtok", "export", "--path", tmp_path, "--no-verify", "--no-chat")
    assert code == 0 and (tmp_path / "tokenizer.mtok").is_file()


def test_export_lossy_refused_lists_each_loss(cli, tmp_path):
    from mtok_export.lower import lower
    from mtok_export.readers.model_dir import read_model_dir
    from mtok_export.targets import DEFAULT, TARGETS

    src, out_dir = write_dir(tmp_path / "src", LOSSY), tmp_path / "out"
    code, out, err = cli("mtok-export", "--path", src, "-o", out_dir, "--no-verify")
    assert code == 3
    losses = lower(read_model_dir(src), TARGETS[DEFAULT])[1].losses
    assert {x.json_path for x in losses} >= {"$.normalizer", "$.decoder"}
    refused = sorted({x.code for x in losses if x.kind.severity.value != "edge"})
    assert err.startswith(f"error: the policy refuses {len(refused)} loss code(s)")
    for x in losses:  # every loss is listed with its code, path and component, accepted or not
        assert f"[{x.code}] {x.json_path} {x.component}: " in out
    assert f"hint: accept them with --accept {','.join(c for c in dict.fromkeys(x.code for x in losses) if c in refused)}" in err
    assert not out_dir.exists() or list(out_dir.iterdir()) == []
    assert list(src.iterdir()) == [src / "tokenizer.json"]


def test_export_lossy_allowed_writes_and_reports(cli, tmp_path):
    src, out_dir = write_dir(tmp_path / "src", LOSSY), tmp_path / "out"
    code, out, err = cli("mtok-export", "--path", src, "-o", out_dir, "--no-verify", "--allow-lossy")
    assert code == 0, err
    assert (out_dir / "tokenizer.mtok").is_file()
    assert "accepted by --allow-lossy" in out and "$.normalizer normalizer NFKC" in out


@pytest.mark.runtime
def test_export_json_report(cli, tmp_path):
    src = write_dir(tmp_path / "src", LOSSY)
    code, out, _ = cli("mtok-export", "--path", src, "-o", tmp_path / "out", "--no-verify", "--allow-lossy", "--json")
    data = json.loads(out)
    assert code == 0
    assert {"ok", "losses", "export", "exit_code"} <= set(data)
    assert data["ok"] is True and data["export"]["output"] == str(tmp_path / "out" / "tokenizer.mtok")
    assert {x["json_path"] for d in data["losses"] for x in d["losses"]} >= {"$.normalizer", "$.decoder"}
    assert {d["accepted_by"] for d in data["losses"]} == {"--allow-lossy"}
    assert "unicode-replaces" in data["export"]["passes"]


@pytest.mark.runtime
def test_export_json_refused(cli, tmp_path):
    src = write_dir(tmp_path / "src", LOSSY)
    code, out, _ = cli("mtok-export", "--path", src, "-o", tmp_path / "out", "--no-verify", "--json")
    data = json.loads(out)
    assert code == 3
    assert data["ok"] is False and len(data["losses"]) >= 2
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


@pytest.mark.runtime
def test_export_json_refused_has_passes(cli, tmp_path):
    src = write_dir(tmp_path / "src", LOSSY)
    _, out, _ = cli("mtok-export", "--path", src, "-o", tmp_path / "out", "--no-verify", "--json")
    assert "passes" in json.loads(out)["export"]


# ---------------------------------------------------------------- inspect

@pytest.fixture
def spec_file(tmp_path) -> Path:
    p = tmp_path / "spec.mtok"
    p.write_bytes(SPEC_2_10)
    return p


def test_inspect_text(cli, spec_file):
    code, out, err = cli("mtok", "inspect", spec_file)
    assert code == 0, err
    assert "header lists" in out and "sections" in out
    assert re.search(r"special\s+1\s+<s>\(3\)", out) and re.search(r"stop\s+1\s+<s>\(3\)", out)
    assert re.search(r"prefix\s+0", out)
    for name, offset, size in [("normalizer", 0x10, 1), ("pre_tokenizer", 0x11, 1), ("model", 0x12, 54),
                               ("decoder", 0x48, 1), ("added_tokens", 0x49, 16), ("chat_template", 0x59, 9),
                               ("eos", 0x62, 6), ("flags", 0x68, 1), ("bos", 0x69, 5), ("post_program", 0x6e, 8)]:
        assert re.search(rf"^\s*{name}\s+0x{offset:08x}\s+{size}(\s+\S.*)?$", out, re.M), name
    # each row says what the section holds (schema.SECTIONS' doc column); brackets are not markup
    assert re.search(r"^\s*model\s.*u8 type \+ fields, vocab, merges\s*$", out, re.M)
    assert re.search(r"^\s*post_program\s.*\{u8 op \[u32 id\]\}\s*$", out, re.M)


def test_inspect_json(cli, spec_file):
    code, out, _ = cli("mtok", "inspect", spec_file, "--json")
    data = json.loads(out)
    assert code == 0
    assert {"sections", "header", "model", "warnings"} <= set(data)
    assert data["sections"][2] == {"name": "model", "offset": 0x12, "size": 54, "present": True,
                                   "holds": "u8 type + fields, vocab, merges"}
    assert data["header"] == {"special": [{"id": 3, "text": "<s>"}], "stop": [{"id": 3, "text": "<s>"}],
                              "prefix": []}
    assert data["model"]["type"] == "BPE" and data["model"]["vocab_size"] == 4
    assert data["warnings"] == []


def test_inspect_section_vocab_prints_every_entry(cli, tmp_path):
    vocab = {f"t{i:03d}": i for i in range(60)}
    p = tmp_path / "big.mtok"
    p.write_bytes(write_mtok(Tokenizer(model=M.BPE(vocab), decoder=D.Fuse())))
    code, out, _ = cli("mtok", "inspect", p, "--section", "vocab")
    assert code == 0
    assert [line.split(None, 1) for line in out.splitlines()] == [[str(i), f"t{i:03d}"] for i in range(60)]


def test_inspect_section_json(cli, spec_file):
    code, out, _ = cli("mtok", "inspect", spec_file, "--section", "vocab", "--json")
    assert code == 0 and json.loads(out) == [[0, "a"], [1, "b"], [2, "ab"], [3, "<s>"]]


def test_inspect_section_bogus(cli, spec_file):
    code, _, err = cli("mtok", "inspect", spec_file, "--section", "bogus")
    assert code == 2 and err.startswith("error: --section 'bogus': choose one of")


def test_inspect_truncated_file(cli, tmp_path):
    p = tmp_path / "cut.mtok"
    p.write_bytes(SPEC_2_10[:0x40])  # the merge at 0x3c needs 12 bytes, 4 are left
    code, out, err = cli("mtok", "inspect", p)
    assert code == 2 and out == ""
    assert err == f"error: {p} section model at 0x0000003c: truncated: 1 merges needs 12 byte(s), 4 left\n"


def test_inspect_missing_file(cli, tmp_path):
    code, _, err = cli("mtok", "inspect", tmp_path / "none.mtok")
    assert code == 2 and err.startswith("error: ") and "cannot read" in err


# ---------------------------------------------------------------- hostile token text

NASTY = ["[bold]x[/bold]", "a\x1b[31mb", "t\tb", "rlo\u202ex", "[/]", "nl\nx"]


@pytest.fixture
def nasty_file(tmp_path) -> Path:
    vocab = {t: i for i, t in enumerate(NASTY)}
    tok = Tokenizer(model=M.BPE(vocab), decoder=D.Fuse(), special_ids=(0,), stop_ids=(4,),
                    added_tokens=(AddedToken(0, NASTY[0], normalized=False, special=True),))
    p = tmp_path / "nasty.mtok"
    p.write_bytes(write_mtok(tok))
    return p


ESCAPED = ["[bold]x[/bold]", "a\\x1b[31mb", "t\\tb", "rlo\\u202ex", "[/]", "nl\\nx"]


def test_inspect_section_vocab_escapes(cli, nasty_file):
    code, out, _ = cli("mtok", "inspect", nasty_file, "--section", "vocab")
    assert code == 0
    # rich expands the tab between id and token to spaces
    assert [line.split(None, 1) for line in out.splitlines()] == [[str(i), e] for i, e in enumerate(ESCAPED)]


def test_inspect_text_escapes(cli, nasty_file):
    code, out, _ = cli("mtok", "inspect", nasty_file)
    assert code == 0
    assert "\x1b" not in out and "\u202e" not in out
    assert "[bold]x[/bold](0)" in out and "[/](4)" in out  # header lists: markup shown, not applied
    assert "a\\x1b[31mb" in out


def test_inspect_emoji_code_token_is_literal(cli, tmp_path):
    p = tmp_path / "emoji.mtok"
    p.write_bytes(write_mtok(Tokenizer(model=M.BPE({":warning:": 0}), decoder=D.Fuse())))
    _, out, _ = cli("mtok", "inspect", p, "--section", "vocab")
    assert out == "0\t:warning:\n"


def test_inspect_file_name_markup_is_literal(cli, tmp_path):
    p = tmp_path / "a[red]b.mtok"
    p.write_bytes(SPEC_2_10)
    _, out, _ = cli("mtok", "inspect", p)
    assert out.splitlines()[0].startswith(str(p))


def test_inspect_file_name_closing_tag_does_not_crash(cli, tmp_path):
    (tmp_path / "d[").mkdir()
    p = tmp_path / "d[" / "x]y.mtok"
    p.write_bytes(SPEC_2_10)
    code, _, err = cli("mtok", "inspect", p)
    assert code == 0, err


# ---------------------------------------------------------------- global options, OS and internal errors (issue 13)

@pytest.fixture(scope="module")
def qwen_mtok(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("q") / "q.mtok"
    assert run_process("mtok", "convert", SAMPLES / "qwen-bpe", out, "--allow-lossy").returncode == 0
    return out


@pytest.mark.parametrize("command", [("export",), ("inspect",), ("verify",), ("convert",), ("tables", "show"),
                                     ("tables", "diff"), ("lint-template",), ("chat",), ("losses",), ()])
def test_global_options_in_every_help(command):
    r = run_process("mtok", *command, "--help")
    assert r.returncode == 0, r.stderr
    for option in ("--debug", "--quiet", "--version"):
        assert option in r.stdout, (command, r.stdout)


def test_global_options_in_mtok_export_help():
    r = run_process("mtok-export", "--help")
    assert r.returncode == 0 and all(o in r.stdout for o in ("--debug", "--quiet", "--version", "--path"))


@pytest.mark.runtime
def test_quiet_prints_nothing_but_errors(qwen_mtok, tmp_path):
    r = run_process("mtok", "inspect", qwen_mtok, "--quiet")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    r = run_process("mtok", "-q", "inspect", tmp_path / "missing.mtok")
    assert r.returncode == 2 and r.stderr == f"error: {tmp_path / 'missing.mtok'}: cannot read (No such file or directory)\n"


def test_debug_anywhere_shows_the_traceback(tmp_path):
    r = run_process("mtok", "inspect", tmp_path / "missing.mtok", "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr and "InputError" in r.stderr


def test_os_error_is_one_line_exit_2(monkeypatch, capsys):
    # An OSError no reader wrapped: the CLI's last line of defence names the file and the reason.
    from mtok_export import deployed_file
    from mtok_export.cli import main

    def broken(*a, **k):
        raise OSError(errno.EIO, os.strerror(errno.EIO), "/data/x.mtok")

    monkeypatch.setattr(deployed_file, "inspect", broken)
    monkeypatch.setattr(sys, "argv", ["mtok", "inspect", "x.mtok"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: /data/x.mtok: Input/output error\n"


def test_internal_error_is_one_line_with_a_hint(monkeypatch, capsys):
    from mtok_export import deployed_file
    from mtok_export.cli import main

    def bug(*a, **k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(deployed_file, "inspect", bug)
    monkeypatch.setattr(sys, "argv", ["mtok", "inspect", "x.mtok"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: internal error: ZeroDivisionError: division by zero",
                                "  hint: rerun with --debug for the traceback, and report it"]


def test_inspect_escapes_once(qwen_mtok):
    out = run_process("mtok", "inspect", qwen_mtok).stdout
    # The template holds the two characters backslash and n; the regex holds \r, \n and \p escapes.
    assert r"{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}" in out
    assert r"[^\r\n\p{L}\p{N}]?\p{L}+" in out
    assert "\\\\" not in out
    assert 'eos "<|im_end|>"' in out


def test_convert_random_file_names_what_it_is_not(tmp_path):
    f = tmp_path / "random.bin"
    f.write_bytes(bytes(range(256)) * 4)
    r = run_process("mtok", "convert", f, tmp_path / "out.mtok")
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {f}: not a tokenizer file this tool recognizes (not tokenizer.json, tekken, "
                               "sentencepiece, gguf")
    # every readable format, in the registry's order (a new format is listed too)
    readable = ", ".join(fmt.name for fmt in FORMATS if fmt.read is not None)
    assert f"(not {readable}), and none is beside it;" in r.stderr
    first, *why = r.stderr.rstrip().splitlines()
    assert first.endswith("it looks like binary data")  # then why each binary format did not take it
    assert why == ["  as SentencePiece model: its first byte 0x00 is not a ModelProto's first field (0x0a)",
                   "  as GGUF: no 'GGUF' magic (its first bytes are b'\\x00\\x01\\x02\\x03')"]


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


@pytest.mark.runtime
@pytest.mark.parametrize("source, fmt", [("qwen-bpe/tokenizer.json", "tokenizer.json"),
                                         ("llama-spm/tokenizer.model", "sentencepiece")])
def test_inspect_of_a_tokenizer_source_says_what_it_is_and_what_to_run(source, fmt):
    # Was "section header at 0x00000000: header line 1 must be decimal integers, got b'{'".
    r = run_process("mtok", "inspect", SAMPLES / source)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{SAMPLES / source}: a {fmt} file, a tokenizer source: `mtok inspect` reads the .mtok" in r.stderr
    assert f"hint: export it with `mtok-export --path {SAMPLES / source}`" in r.stderr
    assert "caused by:" in r.stderr and "section header at 0x00000000" in r.stderr  # the offset, still
    r = run_process("mtok", "inspect", SAMPLES / source.split("/")[0])  # its folder: not an MNN model folder, but a source
    assert r.returncode == 2 and "not an MNN model folder" in r.stderr
    assert f"hint: it holds a tokenizer source: export it with `mtok-export --path {SAMPLES / source.split('/')[0]}`" \
        in r.stderr


def test_inspect_of_a_broken_mtok_still_names_the_offset(tmp_path):
    p = tmp_path / "text.mtok"
    p.write_bytes((SAMPLES / "text.txt").read_bytes())
    r = run_process("mtok", "inspect", p)
    assert r.returncode == 2 and "section header at 0x00000000: header line 1 must be decimal integers" in r.stderr
    assert "hint" not in r.stderr
