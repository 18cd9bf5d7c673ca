"""The option table (`mtok_export/options.py`): one declaration drives every command's options, the
API's keywords, the job's manifest JSON and the hints' vocabulary; a bad value gets the `error:`
line it got before the table (the messages below are the ones the hand-written commands printed,
captured before the change)."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from pathlib import Path
from typing import Annotated, Optional

import pytest
import typer

from mtok_export import api, options
from mtok_export.cli import cmd_export
from mtok_export.job import Job
from mtok_export.losses import KINDS
from mtok_export.job_options import ReadOptions, holder, opt
from mtok_export.options import TABLE
from mtok_export.policy import Decision, refusal_hint
from mtok_export.readers.formats.mnn import MTOK
from mtok_export.targets import names
from tests.support.commands import run_here

REPO = Path(__file__).resolve().parents[1]
QWEN = REPO / "samples" / "qwen-bpe"
# the .mtok targets in the registry's order, as `--target`'s refusal lists them (a new target is listed too)
MTOK_TARGETS = ", ".join(names(MTOK))


# ------------------------------------------------------------------ the table drives the commands and the manifest

def _with_demo():
    """A job whose reader options have one more field, a throwaway option of export and convert:
    the field alone (`opt`) is the whole declaration."""
    read = dataclasses.make_dataclass("Read", [("demo", Optional[str], opt(
        None, "--demo", manifest="demo", commands=("export", "convert"), help="A throwaway option."))],
        bases=(ReadOptions,), frozen=True)
    demo_job = dataclasses.make_dataclass("DemoJob", [("read", read, holder(read, "Input", manifest="read"))],
                                          bases=(Job,), frozen=True)
    return demo_job, options._table(demo_job)


def test_an_option_added_as_a_field_appears_in_its_commands_and_the_manifest():
    demo_job, table = _with_demo()

    @options.command("export", ("path",), table)
    def export(path: Annotated[str, typer.Argument()], options=None):
        return options()

    click = typer.main.get_command(_app(export))
    demo = next(p for p in click.params if p.name == "demo")
    assert (demo.opts, demo.help, demo.default) == (["--demo"], "A throwaway option.", None)
    assert [p.name for p in click.params][:2] == ["path", "chat_template"]  # the order named, then the table's
    assert export(path="x", **{**_defaults(table), "demo": "gpt2"})["demo"] == "gpt2"  # the CLI's value as the keyword
    assert "demo" in [p.name for p in options.signature(table)]  # Job.build's keywords
    values = options.groups(options.bind("build", {"demo": "gpt2"}, table), table)
    assert values["read"]["demo"] == "gpt2"
    job = demo_job(QWEN, read=demo_job.__dataclass_fields__["read"].type(**values["read"]))
    recorded = json.loads(json.dumps(job.to_json()))
    assert recorded["read"]["demo"] == "gpt2" and options.from_json(demo_job, recorded)["read"].demo == "gpt2"
    assert "demo" not in [p.name for p in typer.main.get_command(_app(cmd_export.export)).params]  # the copy only


def test_the_help_panel_is_the_holders():
    by = {o.key: o.panel for o in TABLE}
    assert (by["family"], by["normalizer_form"], by["accept"], by["sweep"], by["verify_on_runtime"]) == \
        ("Input", "Forms", "Policy", "Verification", "Verification")


def _app(fn):
    app = typer.Typer(add_completion=False)
    app.command()(fn)
    return app


def _defaults(table) -> dict:
    ps = [options.parameter(o, "export") for o in table if "export" in o.commands]
    return {p.name: p.default for p in ps}


def test_every_command_option_is_the_tables():
    """The job's options of export, convert and verify are the table's, under its flags."""
    for name, fn in (("export", cmd_export.export),):
        flags = {f for p in typer.main.get_command(_app(fn)).params for f in p.opts}
        assert {f for o in options.options_of(name) for f in o.flags} <= flags
    keywords = set(inspect.signature(Job.build).parameters) - {"cls", "source"}
    assert keywords == {o.key for o in TABLE if o.keyword}
    assert keywords <= set(inspect.signature(api.export).parameters)
    assert keywords - {"fmt"} <= set(inspect.signature(api.convert).parameters)


@pytest.mark.parametrize("keywords", [
    {}, {"fmt": "txt", "target": "mnn-3.5", "bos": "none"},
    {"target": "mnn-head", "header_specials": "all", "normalizer_form": "table", "regex_form": "fold", "max_word": 64,
     "chat_template": "chatml", "pattern": "p", "special": {"<x>": 5}, "family": "gpt2", "accept": ["regex-fold"],
     "strict": True, "allow_crash": True, "allow_lossy": True}])
def test_the_job_json_round_trips(keywords):
    job = Job.build(QWEN, **keywords)
    recorded = json.loads(json.dumps(job.to_json()))
    back = Job.from_manifest({"job": recorded}, QWEN)
    assert back == dataclasses.replace(job, verify=None) and back.to_json() == job.to_json()


def test_the_manifest_records_the_targets_name_in_the_order_it_did():
    """The job JSON as the hand-written `to_json` wrote it (keys; `max_word`, when set, now beside the
    other forms, before the policy), the target by name; a key added since is a recorded option's."""
    got = Job.build(QWEN, target="mnn-head", max_word=8).to_json()
    written = ["read", "format", "target", "bos", "header_specials", "normalizer_form", "regex_form",
               "ignore_merges_form", "max_word", "policy"]
    assert [k for k in got if k in written] == written
    assert set(got) - set(written) <= {o.manifest for o in TABLE if o.manifest}  # a key added since: an option's
    assert list(got["read"]) == ["chat_template", "pattern", "special", "family"]
    assert (got["target"], got["max_word"]) == ("mnn-head", 8) and "max_word" not in Job.build(QWEN).to_json()


def test_an_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'regexform'"):
        Job.build(QWEN, regexform="fold")
    with pytest.raises(TypeError, match="a Job carries its options; got bos"):
        api.verify(QWEN / "tokenizer.mtok", Job.build(QWEN), bos="none")


# ------------------------------------------------------------------ a bad value: the error line it got before

def _run(monkeypatch, capsys, *argv) -> tuple[int, str]:
    code, out, err = run_here(monkeypatch, capsys, "mtok", *argv)
    return code, out + err


_EXPORT = ("export", "-p", str(QWEN), "--no-verify")
BAD = [  # (arguments, the first line printed), as printed before the table
    (("--format", "gguf"), "error: --format 'gguf': choose mtok or txt"),
    (("--target", "mnn-9"), f"error: --target 'mnn-9': choose one of {MTOK_TARGETS}"),
    (("--target", "mnn-legacy"), f"error: --target 'mnn-legacy': choose one of {MTOK_TARGETS}"),
    (("--bos", "maybe"), "error: --bos 'maybe': choose one of auto, prefix, none"),
    (("--header-specials", "some"), "error: --header-specials 'some': choose one of needed, all, none"),
    (("--normalizer-form", "fast"), "error: --normalizer-form 'fast': choose one of compose, no-compose, table"),
    (("--regex-form", "fast"), "error: --regex-form 'fast': choose one of bounded, explicit, fold"),
    (("--format", "txt", "--max-word", "5"), "error: --max-word 5: the legacy tokenizer.txt has no split to cap "
                                             "words with (use --format mtok)"),
    (("--accept", "no-such-loss"), "error: --accept: unknown loss code(s) no-such-loss (known: `mtok losses` lists "
                                   "them)"),
    (("--accept-file", "/nonexistent"), "error: --accept-file /nonexistent: cannot read it (FileNotFoundError: "
                                        "[Errno 2] No such file or directory: '/nonexistent')"),
    (("--no-chat", "--chat-template", "chatml"), "error: --no-chat and --chat-template contradict each other: give "
                                                 "one"),
    (("--special", "{bad"), "error: --special: not valid JSON at line 1 column 2: Expecting property name enclosed "
                            "in double quotes; expected a JSON object {token: id} or list of tokens, or a file "
                            "holding one"),
    (("--input", "nope.json"), f"error: --input nope.json: no such file (looked in {QWEN} and the current "
                               "directory)"),
]


@pytest.mark.parametrize("args,line", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_export_option_prints_the_line_it_did(monkeypatch, capsys, tmp_path, args, line):
    code, printed = _run(monkeypatch, capsys, *_EXPORT, "-o", str(tmp_path / "o"), *args)
    assert (code, printed.splitlines()[0]) == (2, line)


@pytest.mark.parametrize("args,line", [
    (("--max-word", "0"), "Error: Invalid value for '--max-word': 0 is not in the range x>=1."),
    (("--robust-seconds", "0"), "Error: Invalid value for '--robust-seconds': 0.0 is not in the range x>=0.1."),
], ids=["max-word", "robust-seconds"])
def test_a_value_out_of_range_is_a_usage_error(monkeypatch, capsys, tmp_path, args, line):
    code, printed = _run(monkeypatch, capsys, *_EXPORT, "-o", str(tmp_path / "o"), *args)
    assert code == 2 and printed.splitlines()[-1] == line


def test_a_bad_export_option_under_json_is_the_outcomes_error(monkeypatch, capsys, tmp_path):
    code, printed = _run(monkeypatch, capsys, *_EXPORT, "-o", str(tmp_path / "o"), "--json", "--bos", "maybe")
    assert code == 2 and json.loads(printed)["error"] == "--bos 'maybe': choose one of auto, prefix, none"


@pytest.mark.parametrize("args,line", [
    (("--to", "gguf"), "error: --to 'gguf': choose one of mtok, txt, hf"),
    (("--target", "mnn-9"), f"error: --target 'mnn-9': choose one of {MTOK_TARGETS}"),
    (("--special", "{bad"), "error: --special: not valid JSON at line 1 column 2: Expecting property name enclosed "
                            "in double quotes; expected a JSON object {token: id} or list of tokens, or a file "
                            "holding one"),
], ids=["to", "target", "special"])
def test_a_bad_convert_option_prints_the_line_it_did(monkeypatch, capsys, tmp_path, args, line):
    code, printed = _run(monkeypatch, capsys, "convert", str(QWEN), str(tmp_path / "o.mtok"), *args)
    assert (code, printed.splitlines()[0]) == (2, line)


# ------------------------------------------------------------------ hints: the CLI's words or the API's

def test_the_table_spells_an_option_in_either_vocabulary():
    assert (options.spell("accept", ["a", "b"]), options.spell("accept", ["a", "b"], api=True)) == \
        ("--accept a,b", "accept=['a', 'b']")
    assert (options.spell("allow_lossy"), options.spell("allow_lossy", True, api=True)) == \
        ("--allow-lossy", "allow_lossy=True")
    assert (options.spell("regex_form", "fold"), options.spell("regex_form", "fold", api=True)) == \
        ("--regex-form fold", "regex_form='fold'")
    assert (options.name("accept_file"), options.name("accept_file", api=True)) == ("--accept-file", "accept_file=")


def test_a_hint_names_only_the_tables_options_in_its_vocabulary():
    """Every flag a CLI hint names is a table flag and every `key=` an API hint names is a keyword,
    and neither names the other's (the loss reasons, quoted from the registry, aside)."""
    codes = ["regex-fold", "regex-stack", "normalizer-approx", "suffix-not-appended"]
    decisions = [Decision(c, KINDS[c].severity, False, None) for c in codes]
    flags = {f for o in TABLE for f in o.flags}
    keys = {o.key for o in TABLE if o.keyword}
    for api_words in (False, True):
        hint = "\n".join(line for line in refusal_hint(decisions, "mnn-3.6", api=api_words).splitlines()
                         if "the end user would see" not in line)
        hint = hint.replace("(loss regex-fold instead: non-ASCII letters count as both cases; accept it with "
                            "--accept regex-fold)", "")  # NO_CRASH_FOLD's loss note, in the CLI's words for both
        named_flags = set(re.findall(r"--[a-z][a-z-]*", hint))
        named_keys = set(re.findall(r"\b([a-z_]+)=", hint))
        if api_words:
            assert named_flags == set() and named_keys and named_keys <= keys, hint
        else:
            assert named_keys == set() and named_flags and named_flags <= flags, hint


@pytest.mark.runtime
def test_verify_takes_a_job(tmp_path):
    """`api.verify(file, job)`: the job's source and choices re-make the file; a job with another
    choice than the file's is not the same file (the identity check)."""
    from mtok_export.errors import IdentityError

    job = Job.build(QWEN, allow_lossy=True, verify_on_runtime=False, normalizer_form="table")
    written = api.export(job, tmp_path)
    checked = api.verify(written.path, dataclasses.replace(job, verify=options_verify()))
    assert checked.ok and checked.job.forms.normalizer_form == "table"
    with pytest.raises(IdentityError):
        api.verify(written.path, Job.build(QWEN, allow_lossy=True))


def options_verify():
    from mtok_export.job import VerifyOptions

    return VerifyOptions(sweep=False, robust=None)
