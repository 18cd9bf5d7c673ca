"""The one next command (`next_command.py`, DESIGN 4.2, issue 39): every refusal ends with a complete
`mtok-export` command that ships the file, every flag merged, and running it exits 0."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from mtok_export import losses as L
from mtok_export.job import Job
from mtok_export.losses import Loss
from mtok_export.next_command import for_mismatch, for_refusal
from mtok_export.options import keywords, options_of
from mtok_export.policy import Policy, decide
from tests.support.marks import runtime

REPO = Path(__file__).resolve().parents[1]
BERT = REPO.parent / "shared/corpus/tokenizers/bert-base-uncased"
GPT2 = REPO.parent / "shared/corpus/tokenizers/gpt2"


def _parsed(argv: list[str]) -> Job:
    """The job `mtok-export` builds from `argv` (its own parser, in-process, nothing run)."""
    import typer.main

    from mtok_export.cli import cmd_export

    params = {o.name: o for o in options_of("export")}
    command = typer.main.get_command(_app(cmd_export.export))
    ctx = command.make_context("mtok-export", list(argv))
    given = {k: v for k, v in ctx.params.items() if k in params}
    return Job.build(ctx.params["path"][0], **keywords("export", given))


def _app(fn):
    import typer

    app = typer.Typer()
    app.command()(fn)
    return app


@pytest.mark.parametrize("kw", [
    {},
    {"accept": ["stream-decode,bos-template"], "strict": True, "regex_form": "fold", "max_word": 64},
    {"chat_template": ":no-chat", "bos": "none", "verify_on_runtime": False, "header_specials": "all"},
    {"pattern": r"\w+|\s+", "special": {"<|x|>": 9}, "sweep": False, "robust": None, "allow_crash": True},
    {"target": "mnn-head", "normalizer_form": "table", "robust": 3.0, "allow_lossy": True},
])
def test_the_job_spelled_as_options_parses_back_to_the_same_job(kw):
    job = Job.build(GPT2, **kw)
    argv = ["--path", str(GPT2), *job.argv()]
    assert _parsed(argv) == job, argv


def _refused(*kinds, **policy) -> list:
    return decide([Loss(k, "c", "$.x", "why") for k in kinds], Policy(**policy))


def test_a_refusal_is_answered_by_accepting_its_codes_merged_with_the_users():
    job = Job.build(BERT, accept=["bert-clean"], normalizer_form="table")
    step = for_refusal(job, _refused(L.SUFFIX_NOT_APPENDED, L.STREAM_DECODE, L.REGEX_CONTROL), BERT, Path("out"))
    assert step.argv[:5] == ("mtok-export", "--path", str(BERT), "--output", "out")
    assert "--accept bert-clean,stream-decode,suffix-not-appended" in step.line
    assert "--normalizer-form table" in step.line  # the user's own flags stay
    assert "--target mnn-head" in step.why  # the alternative that runs suffix-not-appended exactly
    assert "\n" not in step.why and "\n" not in step.line
    assert for_refusal(job, _refused(L.REGEX_CONTROL), BERT, None) is None  # an edge warning refuses nothing


def test_a_crash_of_the_exact_split_is_answered_by_the_bounded_form_else_by_allow_crash():
    job = Job.build(GPT2, regex_form="explicit")
    crash = [Loss(L.REGEX_STACK, "split", "$.pre_tokenizer", "why", pattern=r"\S{4000,}")]
    step = for_refusal(job, decide(crash, job.policy), GPT2, None)
    assert "--regex-form bounded" not in step.line and "--regex-form" not in step.line  # bounded: the default
    assert "--allow-crash" not in step.line and step.why.startswith("--regex-form bounded")
    job = Job.build(GPT2)  # already bounded: nothing but --allow-crash ships it
    other = [Loss(L.RUNTIME_CRASH, "runtime", "$", "crashed")]
    step = for_refusal(job, decide(other, job.policy), GPT2, None)
    assert "--allow-crash" in step.line and "report it" in step.why


def test_a_stale_accept_file_under_strict_is_answered_without_strict(tmp_path):
    f = tmp_path / "accept.txt"
    f.write_text("stream-decode\n")
    job = Job.build(GPT2, accept_file=f, strict=True)
    decisions = decide([Loss(L.REGEX_CONTROL, "c", "$", "why")], job.policy)
    step = for_refusal(job, decisions, GPT2, None)
    assert "--strict" not in step.line and f"--accept-file {f}" in step.line and "regex-control" in step.line


def test_a_mismatch_names_its_component_and_the_report_to_attach():
    step = for_mismatch(Job.build(GPT2), "split", ["--regex-form bounded|explicit|fold: how ..."], GPT2, None)
    assert step.argv[-2:] == ("--report", "mtok-report.json")
    assert "points at the split" in step.why and "attach mtok-report.json" in step.why


@runtime
def test_every_refusal_ends_with_a_command_that_ships_the_file(cli, tmp_path):
    out = tmp_path / "bert"
    code, _, err = cli("mtok-export", "--path", BERT, "-o", out, "--no-verify")
    assert code == 3, err
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("next: mtok-export "), err
    argv = shlex.split(last[len("next: "):])
    code, _, err2 = cli("mtok-export", *argv[1:])
    assert code == 0, err2
    # in the JSON outcome too, and the job summary says what to do
    code, stdout, _ = cli("mtok-export", "--path", BERT, "-o", out, "--no-verify", "--json",
                          "--summary", tmp_path / "summary.md")
    outcome = json.loads(stdout)
    assert code == 3 and outcome["next_command"]["command"] == last[len("next: "):]
    assert "What to do:" in (tmp_path / "summary.md").read_text() and last[len("next: "):] in \
        (tmp_path / "summary.md").read_text()
