"""The acceptance policy (`policy.py`): which losses are accepted by default (edge), by a flag or by
an accept file, measured severity over declared, and unknown codes refused."""

from __future__ import annotations

import dataclasses

import pytest

from mtok_export import losses as L
from mtok_export.errors import InputError, LossError
from mtok_export.losses import Loss, Severity
from mtok_export.policy import (ACCEPT_FILE, Policy, decide, own_accept_file, read_accept_file, refusal_hint,
                                stale_codes)


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


def test_stale_accepted_codes(tmp_path):
    """A code the accept file lists that the export no longer records: listed by stale_codes (the CLI
    warns), refused under --strict (a decision of its own, named in the error), never for a fleet's
    shared accept file (another model may record it)."""
    f = tmp_path / "accepted.txt"
    f.write_text("stream-decode\nprefix-space\n")
    losses = [_loss(L.STREAM_DECODE)]
    policy = Policy.from_options(accept_file=f)
    assert stale_codes(policy, ["stream-decode"]) == ["prefix-space"]
    assert [d.code for d in decide(losses, policy)] == ["stream-decode"]  # a warning only
    strict = Policy.from_options(accept_file=f, strict=True)
    d = {x.code: x for x in decide(losses, strict)}
    assert (d["prefix-space"].stale, d["prefix-space"].accepted, d["prefix-space"].losses) == (True, False, [])
    assert d["prefix-space"].to_json()["stale"] is True and "stale" not in d["stream-decode"].to_json()
    error = LossError(list(d.values()))
    assert str(error) == "the policy refuses 1 loss code(s): prefix-space (stale in the accept file)"
    hint = refusal_hint(list(d.values()))
    assert hint == ("prefix-space: the accept file lists it, but this export no longer records it: remove it from "
                    "the file (strict refuses a stale accept file)")
    shared = dataclasses.replace(strict, shared=True)
    assert stale_codes(shared, ["stream-decode"]) == [] and [x.code for x in decide(losses, shared)] == ["stream-decode"]


def test_a_model_folders_own_accept_file(tmp_path):
    shared_file, own = tmp_path / "shared.txt", tmp_path / "model" / ACCEPT_FILE
    shared_file.write_text("bos-template\n")
    own.parent.mkdir()
    assert own_accept_file(Policy(), own.parent) == Policy()  # none there: as it was
    own.write_text("stream-decode\n")
    for policy in (Policy(), dataclasses.replace(Policy.from_options(accept_file=shared_file), shared=True)):
        mine = own_accept_file(policy, own.parent)
        assert (mine.accept_file_codes, mine.accept_file, mine.shared) == ({"stream-decode"}, str(own), False)
    given = Policy.from_options(accept_file=shared_file)  # --accept-file of one export: it wins
    assert own_accept_file(given, own.parent) == given
    own.write_text("no-such-code\n")
    with pytest.raises(InputError, match="no-such-code"):
        own_accept_file(Policy(), own.parent)


# ------------------------------------------------------------------ usage (DESIGN 4.2, issue 39)
# A loss is judged by how the model is used: a decode-only loss cannot reach an encoder's user.

def _usage(value):
    from mtok_export.readers.interpretation import Decision as Said

    return Said(value, "config.json model_type bert")


def test_a_decode_loss_of_an_encoder_is_not_reached_and_of_a_generator_is_refused():
    losses = [_loss(L.STREAM_DECODE), _loss(L.NO_DECODER), _loss(L.SUFFIX_NOT_APPENDED)]
    enc = {x.code: x for x in decide(losses, Policy(), usage=_usage("encoder"))}
    assert enc["stream-decode"].accepted_by == enc["no-decoder"].accepted_by == "usage"
    assert "never decodes" in enc["stream-decode"].why and "model_type bert" in enc["stream-decode"].why
    assert enc["stream-decode"].to_json()["why"] == enc["stream-decode"].why
    assert enc["suffix-not-appended"].accepted_by is None  # a missing [SEP] changes an encoder's embeddings
    gen = {x.code: x for x in decide(losses, Policy(), usage=_usage("generator"))}
    assert [gen[c].accepted_by for c in ("stream-decode", "no-decoder")] == [None, None]
    assert {x.accepted_by for x in decide(losses, Policy(), usage=None)} == {None}  # nothing decided: it decodes
    strict = {x.code: x for x in decide(losses, Policy(strict=True), usage=_usage("encoder"))}
    assert strict["stream-decode"].accepted_by is None  # --strict refuses what the default lets pass
