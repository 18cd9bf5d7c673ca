"""The job (`mtok_export.job.Job`): every choice of an export in one value, checked once when made
(whichever way: the CLI's options, the API's keywords, `dataclasses.replace`, a manifest), written
into the manifest and read back by `mtok verify`, so the file is re-lowered with exactly the
recorded choices, also from a manifest written before the job was recorded."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from pathlib import Path

import pytest

from mtok_export import api
from mtok_export.errors import IdentityError, InputError
from mtok_export.job_options import ReadOptions
from mtok_export.job import Job, VerifyOptions
from mtok_export.lower import Forms
from mtok_export.policy import Policy
from mtok_export.readers.formats.mnn import MTOK
from mtok_export.targets import TARGETS, names
from mtok_export.verify.pipeline import prepare
from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[1]
QWEN = REPO / "samples" / "qwen-bpe"  # tokenizer.json with an NFC normalizer and a chat template
# the .mtok targets in the registry's order, as `--target`'s refusal lists them (a new target is listed too)
MTOK_TARGETS = ", ".join(names(MTOK))


# ------------------------------------------------------------------ checked once, naming the option

@pytest.mark.parametrize("options,message", [
    ({"fmt": "gguf"}, "--format 'gguf': choose mtok or txt"),
    ({"target": "mnn-9"}, f"--target 'mnn-9': choose one of {MTOK_TARGETS}"),
    ({"target": "mnn-legacy"}, f"--target 'mnn-legacy': choose one of {MTOK_TARGETS}"),  # it is --format txt
    ({"bos": "maybe"}, "--bos 'maybe': choose one of auto, prefix, none"),
    ({"header_specials": "some"}, "--header-specials 'some': choose one of needed, all"),
    ({"normalizer_form": "fast"}, "--normalizer-form 'fast': choose one of compose, no-compose, table"),
    ({"regex_form": "fast"}, "--regex-form 'fast': choose one of bounded, explicit, fold"),
    ({"accept": ["no-such-loss"]}, "--accept: unknown loss code(s) no-such-loss"),
])
def test_a_bad_choice_names_its_option(options, message):
    with pytest.raises(InputError) as info:
        Job.build(QWEN, **options)
    assert str(info.value).startswith(message) and info.value.exit_code == 2


def test_a_job_made_another_way_is_checked_the_same():
    job = Job.build(QWEN)
    with pytest.raises(InputError, match=r"^--bos 'maybe': choose one of"):
        dataclasses.replace(job, bos="maybe")
    with pytest.raises(InputError, match=r"^--max-word 5: the legacy tokenizer.txt"):
        dataclasses.replace(job, target=TARGETS["mnn-legacy"], forms=Forms(max_word=5))


def test_the_job_holds_a_target_object_and_the_edge_resolves_names():
    assert Job.build(QWEN).target is TARGETS["mnn-3.6"] and Job(QWEN).target is TARGETS["mnn-3.6"]  # the default
    assert Job.build(QWEN, target="mnn-head").target is TARGETS["mnn-head"]
    assert Job(QWEN, target=TARGETS["mnn-3.5"]).target is TARGETS["mnn-3.5"]  # an object is taken as it is
    txt = Job.build(QWEN, fmt="txt", target="mnn-3.5")  # a tokenizer.txt is for the legacy runtime, whatever was asked
    assert (txt.target, txt.output.names[0], txt.fmt) == (TARGETS["mnn-legacy"], "tokenizer.txt", "txt")
    with pytest.raises(TypeError, match="a Job holds a Target object, not 'mnn-head'"):  # a name is the edge's
        Job(QWEN, target="mnn-head")
    with pytest.raises(InputError, match=r"^--target 'mnn-9'"):
        Job.build(QWEN, target="mnn-9")


def test_an_unregistered_target_object_goes_through_the_api(tmp_path):
    """A `Target` the registry does not hold (a user's runtime entry) is exported for as it is: the
    file is the one its registered twin writes, the manifest names it, and it is never looked up."""
    from mtok_export import targets

    mine = dataclasses.replace(TARGETS["mnn-3.6"], name="my-runtime", default=False)
    assert "my-runtime" not in targets.TARGETS
    ours = api.export(Job(QWEN, target=mine, policy=Policy(allow_lossy=True), verify=None), tmp_path / "mine")
    twin = api.export(Job(QWEN, policy=Policy(allow_lossy=True), verify=None), tmp_path / "twin")
    assert ours.job.target is mine and ours.manifest["job"]["target"] == "my-runtime"
    assert ours.path.read_bytes() == twin.path.read_bytes()
    assert Job.build(QWEN, target=mine).target is mine  # Job.build passes an object through too


def test_build_gathers_the_keywords_into_the_values():
    job = Job.build(str(QWEN), input="tokenizer.json", chat_template="chatml", pattern="p", special=["<x>"],
                    family="gpt2", bos="none", accept=["normalizer-approx,regex-control"], strict=True,
                    corpus="c.jsonl", runtime_python="/py", sweep=False)
    assert (job.source, job.input, job.read) == (QWEN, Path("tokenizer.json"), ReadOptions("chatml", "p", ["<x>"], "gpt2"))
    assert job.policy == Policy(frozenset({"normalizer-approx", "regex-control"}), strict=True)
    assert job.verify == VerifyOptions(Path("c.jsonl"), Path("/py"), sweep=False)
    assert Job.build(QWEN, verify_on_runtime=False).verify is None
    assert job.path() == QWEN / "tokenizer.json"


def test_an_input_that_is_not_there_is_named():
    with pytest.raises(InputError, match=r"^--input nope\.json: no such file"):
        Job.build(QWEN, input="nope.json").path()


def test_the_api_takes_a_job_or_keywords_not_both(tmp_path):
    with pytest.raises(TypeError, match="a Job carries its options; got allow_lossy"):
        api.export(Job.build(QWEN), tmp_path, allow_lossy=True)


def test_the_api_and_a_job_write_the_same(tmp_path):
    by_keywords = api.export(QWEN, tmp_path / "a", allow_lossy=True, verify_on_runtime=False, bos="none",
                             normalizer_form="no-compose")
    job = Job(QWEN, bos="none", forms=Forms(normalizer_form="no-compose"), policy=Policy(allow_lossy=True), verify=None)
    by_job = api.export(job, tmp_path / "b")
    assert by_job.path.read_bytes() == by_keywords.path.read_bytes()
    assert by_job.manifest["job"] == by_keywords.manifest["job"]
    assert by_job.job == job  # the path read: the source itself here


# ------------------------------------------------------------------ the manifest records it; verify reads it back

BERT = REPO / "samples" / "bert-wordpiece"  # [CLS] is BOS: the BOS policy changes its bytes


def _model(tmp_path: Path, sample: Path = QWEN) -> Path:
    """A copy of `sample`; for qwen-bpe with 40 reserved special tokens (more than the header keeps
    without a role), so `header_specials` changes its bytes as `normalizer_form` does."""
    src = tmp_path / "model"
    shutil.copytree(sample, src)
    if sample == QWEN:
        path = src / "tokenizer.json"
        t = json.loads(path.read_text(encoding="utf-8"))
        n = 1 + max([a["id"] for a in t["added_tokens"]] + list(t["model"]["vocab"].values()))
        t["added_tokens"] += [{"id": n + i, "content": f"<|reserved_{i}|>", "single_word": False, "lstrip": False,
                               "rstrip": False, "normalized": False, "special": True} for i in range(40)]
        path.write_text(json.dumps(t), encoding="utf-8")
    return src


def _exported(tmp_path: Path, sample: Path = QWEN, **options) -> Path:
    src = _model(tmp_path, sample)
    return api.export(src, src / "mnn", allow_lossy=True, verify_on_runtime=False, **options).path


CHOICES = {"header_specials": "all", "normalizer_form": "table"}  # each changes the bytes of _model's qwen


def test_the_manifest_holds_the_job_as_json(tmp_path):
    out = _exported(tmp_path, **CHOICES)
    m = json.loads(out.with_name("tokenizer.mtok.json").read_text(encoding="utf-8"))
    _holds(m["job"], {"read": {"chat_template": None, "pattern": None, "special": None, "family": None},
                        "format": "mtok", "target": "mnn-3.6", "bos": "auto", "header_specials": "all",
                        "normalizer_form": "table", "regex_form": "bounded", "ignore_merges_form": "exact",
                        "policy": {"accept": [], "accept_file": None, "accept_file_codes": [], "allow_lossy": True,
                                   "strict": False, "allow_crash": False}},
           Job.build(QWEN).to_json())
    assert "read_options" not in m and "policy" not in m  # the job holds them now


def _holds(got: dict, written: dict, default: dict) -> None:
    """`got` holds every key and value `written` holds (nested objects alike), and a key added since
    holds what a job that did not choose it records (`default`)."""
    assert set(written) <= set(got) <= set(written) | set(default)
    for k, v in got.items():
        want = written.get(k, default.get(k))
        if isinstance(v, dict) and isinstance(want, dict):
            _holds(v, want, default[k])
        else:
            assert v == want, k


def test_verify_relowers_with_the_recorded_job(tmp_path):
    out = _exported(tmp_path, **CHOICES)
    manifest, _, _, lw, job = prepare(out)  # the identity check: re-made from the source, the same bytes
    assert (job.forms.header_specials, job.forms.normalizer_form, job.policy.allow_lossy) == ("all", "table", True)
    assert job.source == tmp_path / "model" and lw.forms.normalizer_form == "table"


@pytest.mark.parametrize("sample,choice,recorded", [
    (QWEN, ("normalizer_form", "table"), "compose"), (QWEN, ("header_specials", "all"), "needed"),
    (BERT, ("bos", "none"), "auto")], ids=["normalizer_form", "header_specials", "bos"])
def test_verify_would_catch_a_choice_it_did_not_read(tmp_path, sample, choice, recorded):
    """Each recorded choice is read back: exported with it, the file verifies; with the recorded
    value changed, the file is not what the source gives."""
    out = _exported(tmp_path, sample, **dict([choice]))
    assert prepare(out)[4].bos == (choice[1] if choice[0] == "bos" else "auto")
    path = out.with_name("tokenizer.mtok.json")
    m = json.loads(path.read_text(encoding="utf-8"))
    m["job"][choice[0]] = recorded
    path.write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(IdentityError):
        prepare(out)


def _as_before_the_job(m: dict) -> dict:
    """The keys a manifest had before it recorded the job (checked against one written by the
    previous release: `read_options` with the six reader and lowering options, `policy`)."""
    old = {k: v for k, v in m.items() if k != "job"}
    job = m["job"]
    old["read_options"] = {**job["read"], "header_specials": job["header_specials"],
                           "normalizer_form": job["normalizer_form"]}
    old["policy"] = job["policy"]
    return old  # target and bos_policy were there already


def test_a_manifest_from_before_the_job_still_verifies(tmp_path):
    out = _exported(tmp_path, **CHOICES, regex_form="explicit")  # that release's one form
    path = out.with_name("tokenizer.mtok.json")
    m = json.loads(path.read_text(encoding="utf-8"))
    recorded = Job.from_manifest(m, tmp_path / "model")
    path.write_text(json.dumps(_as_before_the_job(m)), encoding="utf-8")
    _, _, _, _, job = prepare(out)
    assert job == recorded and job.policy.allow_lossy
    # and its read options are what it is re-made with: without them, not the same file
    old = json.loads(path.read_text(encoding="utf-8"))
    del old["read_options"]
    path.write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(IdentityError):
        prepare(out)


def test_verify_options_replace_the_recorded_ones(tmp_path):
    out = _exported(tmp_path, BERT, bos="none")
    with pytest.raises(IdentityError):  # lowered with another BOS policy: not the recorded file
        prepare(out, bos="auto")
    assert prepare(out, bos="none")[4].bos == "none"
    with pytest.raises(InputError, match=r"^--bos 'sometimes': choose one of"):
        prepare(out, bos="sometimes")
    with pytest.raises(InputError, match=r"^--target 'mnn-9': choose one of"):
        prepare(out, target="mnn-9")


@pytest.mark.parametrize("change,message", [
    (lambda m: m.update(job=[]), r"tokenizer\.mtok\.json: \$\.job: not a JSON object"),
    (lambda m: m["job"].update(read="x"), r"tokenizer\.mtok\.json: \$\.job\.read: not a JSON object"),
    (lambda m: m["job"].update(target="mnn-9"), r"tokenizer\.mtok\.json: --target 'mnn-9': choose one of"),
    (lambda m: m["job"].update(normalizer_form=7), r"tokenizer\.mtok\.json: --normalizer-form 7: choose one of"),
])
def test_a_malformed_recorded_job_is_bad_input_naming_the_manifest(tmp_path, change, message):
    out = _exported(tmp_path)
    path = out.with_name("tokenizer.mtok.json")
    m = json.loads(path.read_text(encoding="utf-8"))
    change(m)
    path.write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        prepare(out)
    assert info.value.exit_code == 2


# ------------------------------------------------------------------ the CLI builds the same job

def _cli(monkeypatch, capsys, *argv):
    from mtok_export import cli

    monkeypatch.setattr(sys, "argv", ["mtok", *map(str, argv)])
    try:
        cli.main()
    except SystemExit as e:
        code = e.code
    return code, *capsys.readouterr()


def test_the_cli_records_the_job_the_api_does(tmp_path, monkeypatch, capsys):
    code, _, err = _cli(monkeypatch, capsys, "--quiet", "export", "--path", QWEN, "-o", tmp_path / "cli",
                        "--allow-lossy", "--no-verify", "--bos", "none", "--normalizer-form", "table")
    assert code == 0, err
    by_api = api.export(QWEN, tmp_path / "api", allow_lossy=True, verify_on_runtime=False, bos="none",
                        normalizer_form="table")
    m = json.loads((tmp_path / "cli/tokenizer.mtok.json").read_text(encoding="utf-8"))
    assert m["job"] == by_api.manifest["job"]
    assert (tmp_path / "cli/tokenizer.mtok").read_bytes() == by_api.path.read_bytes()


def test_the_target_help_comes_from_the_registry(monkeypatch, capsys):
    from mtok_export import targets

    def shown(command):  # the help as one line (click wraps it, after a hyphen too)
        code, out, _ = _cli(monkeypatch, capsys, command, "--help")
        assert code == 0
        return " ".join(out.split()).replace("- ", "-")

    *first, last = targets.names(targets.MTOK)  # whatever the registry holds (a target added later too)
    assert f"Runtime the .mtok is for: {', '.join(first)} or {last} [default: {targets.DEFAULT}]." in shown("export")
    monkeypatch.setitem(targets.TARGETS, "mnn-9.9", dataclasses.replace(targets.TARGETS["mnn-3.6"], name="mnn-9.9"))
    *first, last = targets.names(targets.MTOK)
    assert last == "mnn-9.9"
    for command in ("export", "convert", "verify"):
        out = shown(command)
        assert f"{', '.join(first)} or mnn-9.9 [default: " in out and "{targets}" not in out, command


def test_a_fleet_model_reads_its_own_source():
    from mtok_export.cli.fleet import Model

    base = Job.build("first", bos="none")
    assert Model("qwen", QWEN).job(base) == dataclasses.replace(base, source=QWEN)
    hub = Model("qwen", repo="acme/qwen", revision="v1").job(base)
    assert (hub.source, hub.bos) == (Path("acme/qwen@v1"), "none")  # api.export fetches it


@needs_mnn
def test_mtok_verify_runs_an_earlier_manifest_on_the_runtime(tmp_path, monkeypatch, capsys):
    """End to end, as a CI job verifying an artifact exported before the job was recorded: the
    source re-lowered with the old keys' choices, then the runtime against the reference, under the
    recorded policy (allow_lossy: no option given)."""
    out = _exported(tmp_path, **CHOICES)
    path = out.with_name("tokenizer.mtok.json")
    path.write_text(json.dumps(_as_before_the_job(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    code, stdout, err = _cli(monkeypatch, capsys, "verify", out, "--no-sweep", "--json")
    assert code == 0, err
    outcome = json.loads(stdout)
    by = {d["accepted_by"] for d in outcome["losses"]}
    assert outcome["exit_code"] == 0 and "--allow-lossy" in by and None not in by  # the old policy key, read


def test_a_manifest_that_records_no_regex_form_was_written_in_the_explicit_one(tmp_path):
    """The bounded split became the default (issue 39); a manifest written before the choice was
    recorded re-makes its file in the one form there was, so its identity check still holds."""
    out = _exported(tmp_path, **CHOICES)
    m = json.loads(out.with_name("tokenizer.mtok.json").read_text(encoding="utf-8"))
    assert Job.from_manifest(m, tmp_path / "model").forms.regex_form == "bounded"
    del m["job"]["regex_form"]
    assert Job.from_manifest(m, tmp_path / "model").forms.regex_form == "explicit"
