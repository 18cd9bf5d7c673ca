"""The acceptance policy (`policy.py`): which losses are accepted by default (edge), by a flag or by
an accept file, measured severity over declared, and unknown codes refused."""

from __future__ import annotations

import pytest

from mtok_export import losses as L
from mtok_export.errors import InputError
from mtok_export.losses import Loss, Severity
from mtok_export.policy import Policy, decide, read_accept_file


def _loss(kind):
    return Loss(kind, "c", "$.x", "why")


def test_policy_edge_warns_others_refuse():
    d = {x.code: x for x in decide([_loss(L.REGEX_CONTROL), _loss(L.STREAM_DECODE)], Policy())}
    assert d["regex-control"].accepted_by == "edge" and not d["regex-control"].measured
    assert d["stream-decode"].accepted_by is None and d["stream-decode"].severity == Severity.TEXT


def test_policy_measured_severity_replaces_declared():
    reach = {"stream-decode": {"everyday": 0, "edge": 3, "checks": {"streaming decode": 3}, "severity": "edge"},
             "regex-control": {"everyday": 2, "edge": 0, "checks": {"raw ids": 2}, "severity": "text"}}
    d = {x.code: x for x in decide([_loss(L.REGEX_CONTROL), _loss(L.STREAM_DECODE)], Policy(), reach)}
    assert d["stream-decode"].accepted_by == "edge" and d["stream-decode"].measured
    assert d["regex-control"].accepted_by is None and d["regex-control"].severity == Severity.TEXT


def test_policy_flags(tmp_path):
    losses = [_loss(L.REGEX_CONTROL), _loss(L.STREAM_DECODE), _loss(L.BOS_TEMPLATE)]
    f = tmp_path / "accepted.txt"
    f.write_text("# reviewed 2026-11\nbos-template  # the template adds BOS\n\n")
    by = lambda p: {x.code: x.accepted_by for x in decide(losses, p)}  # noqa: E731
    assert by(Policy.from_options(["stream-decode"], f)) == {"regex-control": "edge", "stream-decode": "--accept",
                                                             "bos-template": "--accept-file"}
    assert by(Policy.from_options(strict=True))["regex-control"] is None
    assert set(by(Policy.from_options(allow_lossy=True, strict=True)).values()) == {"--allow-lossy"}
    assert by(Policy.from_options(["stream-decode,bos-template"]))["bos-template"] == "--accept"


def test_policy_rejects_unknown_codes(tmp_path):
    with pytest.raises(InputError, match="unknown loss code.*stream-decod\\b"):
        Policy.from_options(["stream-decod"])
    f = tmp_path / "a.txt"
    f.write_text("regex-control\nno-such-code\n")
    with pytest.raises(InputError, match="no-such-code"):
        read_accept_file(f)
    with pytest.raises(InputError, match="cannot read"):
        read_accept_file(tmp_path / "missing.txt")
