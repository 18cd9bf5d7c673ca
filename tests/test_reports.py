"""`reports.junit_xml`: the suite and the classname of its cases name the command, the model and the
output (several models in one CI pipeline must not collide), and every suite and case has a `time`.
The CLI tests run real exports with --no-verify (a loss refused, a bad input) of two samples."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path


from mtok_export.errors import InputError
from mtok_export.losses import Severity
from mtok_export.policy import Decision
from mtok_export.reports import junit_xml
from mtok_export.verify.check import Check, Mismatch, Report

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _report():
    bad = Mismatch("raw ids", "s1", "hello", [1, 2], [1, 3], ())
    return Report("out/tokenizer.mtok", "mnn-3.6", "MNN 3.6.1",
                  [Check("raw ids", ok=9, total=10, mismatches=[bad]), Check("full decode", skipped="not exposed"),
                   Check("chat ids", ok=4, total=4)], [])


def test_suite_and_classname_name_command_model_and_output():
    decisions = [Decision("regex-control", Severity.EDGE, False, "edge"), Decision("stream-decode", Severity.TEXT,
                                                                                 True, None)]
    xml = junit_xml("mtok-export", "models/a -> out/a.mtok", 1, seconds=12.3456, report=_report(),
                    decisions=decisions)
    suite = ET.fromstring(xml.encode())
    assert suite.get("name") == "mtok-export: models/a -> out/a.mtok" and suite.get("time") == "12.346"
    assert suite.get("tests") == "5" and suite.get("failures") == "2" and suite.get("skipped") == "1"
    assert [(c.get("classname"), c.get("name"), c.get("time")) for c in suite] == [
        ("mtok-export: models/a -> out/a.mtok", name, "0.000")
        for name in ("check raw ids", "check full decode", "check chat ids", "loss regex-control", "loss stream-decode")]
    other = ET.fromstring(junit_xml("mtok-export", "models/b -> out/b.mtok", 1, seconds=1, report=_report(),
                                    decisions=decisions).encode())
    assert {(c.get("classname"), c.get("name")) for c in suite}.isdisjoint(
        {(c.get("classname"), c.get("name")) for c in other})


def test_bad_input_case_carries_the_time():
    suite = ET.fromstring(junit_xml("mtok verify", "x.mtok", 2, seconds=0.5, error=InputError("x.mtok: bad")).encode())
    assert suite.get("errors") == "1" and suite.get("time") == "0.500"
    (case,) = suite
    assert case.get("name") == "input" and case.get("time") == "0.500" and case.get("classname") == "mtok verify: x.mtok"
    assert case.find("error").get("message") == "x.mtok: bad"


def test_two_models_in_one_pipeline_do_not_collide(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    suites = {}
    for name in ("llama-spm", "t5-unigram"):
        out = tmp_path / name
        code, _, _ = cli("mtok-export", "--path", SAMPLES / name, "--output", out, "--no-verify", "--strict", "--junit",
                         tmp_path / f"{name}.xml")
        assert code == 3
        suites[name] = ET.parse(tmp_path / f"{name}.xml").getroot()
        assert suites[name].get("name") == f"mtok-export: {SAMPLES / name} -> {out / 'tokenizer.mtok'}"
        assert float(suites[name].get("time")) > 0
        assert all(c.get("classname") == suites[name].get("name") and c.get("time") is not None for c in suites[name])
    names = [{(c.get("classname"), c.get("name")) for c in s} for s in suites.values()]
    assert names[0] and names[1] and names[0].isdisjoint(names[1])
    assert cli("mtok-export", "--path", tmp_path / "missing", "--junit", tmp_path / "m.xml")[0] == 2
    suite = ET.parse(tmp_path / "m.xml").getroot()
    assert suite.get("name") == f"mtok-export: {tmp_path / 'missing'} -> {tmp_path / 'missing'}"
    # an input refused before any work: the command's time, which may round to 0.000
    assert [c.get("name") for c in suite] == ["input"] and float(suite[0].get("time")) >= 0
