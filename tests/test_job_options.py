"""The holders of the job's options (`mtok_export/job_options.py`): each field declares its option, and
the manifest's JSON of every holder is derived from those fields both ways (`options.to_json`,
`options.from_json`), so a value set on any recorded field comes back; a field the derivation
would drop (no manifest key) is caught."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from mtok_export import options
from mtok_export.job_options import MANIFEST, OPTION, Forms, Policy, ReadOptions, VerifyOptions, flag
from mtok_export.options import TABLE

# a value other than the default for each recorded field of a free type (what a user could have
# chosen); a switch's and a choice's are derived from its declaration (`_other`)
SET = {"chat_template": "chatml", "pattern": r"\s+", "special": {"<x>": 5}, "family": "gpt2", "max_word": 64,
       "accept": frozenset({"regex-fold"}), "accept_file": "accept.txt",
       "accept_file_codes": frozenset({"stream-decode"})}


def _other(f: dataclasses.Field):
    """A value of field `f` other than its default: a switch's other state, another of its choices,
    else the one `SET` holds (a field of a free type added later gets one there, or this fails)."""
    choices = (f.metadata.get(OPTION) or {}).get("choices")
    if isinstance(f.default, bool):
        return not f.default
    if choices:
        return next(c for c in choices if c != f.default)
    assert f.name in SET, f"{f.name}: give a value other than its default in SET"
    return SET[f.name]


def _round_trip(holder):
    return type(holder)(**options.from_json(type(holder), json.loads(json.dumps(options.to_json(holder)))))


@pytest.mark.parametrize("cls", [ReadOptions, Forms, Policy], ids=lambda c: c.__name__)
def test_every_recorded_field_comes_back_from_the_manifest(cls):
    recorded = [f for f in dataclasses.fields(cls) if f.metadata.get(MANIFEST)]
    holder = cls(**{f.name: _other(f) for f in recorded})
    assert all(getattr(holder, f.name) != f.default for f in recorded if f.default is not dataclasses.MISSING)
    assert _round_trip(holder) == holder
    assert _round_trip(cls()) == cls()  # and the defaults (max_word None: left out, read back as None)


def test_a_field_the_manifest_does_not_record_is_caught():
    """The mutant: `normalizer_form` without its manifest key is lost on the way back."""
    f = Forms.__dataclass_fields__["normalizer_form"]
    mutant = dataclasses.make_dataclass("Forms", [("normalizer_form", str, dataclasses.field(
        default="compose", metadata={**f.metadata, MANIFEST: None}))], bases=(Forms,), frozen=True)
    holder = mutant(normalizer_form="table")
    assert _round_trip(holder) != holder


def test_the_policy_json_is_the_one_the_hand_written_code_wrote():
    """Keys and values as `Policy.to_json` wrote them before the fields were its source."""
    p = Policy(frozenset({"b", "a"}), "f.txt", frozenset({"c"}), allow_lossy=True)
    assert options.to_json(p) == {"accept": ["a", "b"], "accept_file": "f.txt", "accept_file_codes": ["c"],
                                  "allow_lossy": True, "strict": False, "allow_crash": False}
    assert options.to_json(Policy())["accept_file"] is None  # "" (none) is recorded as null, and read back as ""
    assert options.from_json(Policy, {"accept_file": None}) == {}


def test_each_option_is_declared_on_its_field():
    """Each keyword of the table comes from one field's declaration (or a switch beside it) with its
    flag and help; messages name the flag the field declares."""
    for o in TABLE:
        assert o.flags and o.help, o.key
    for owner, cls in {"read": ReadOptions, "forms": Forms, "policy": Policy, "verify": VerifyOptions}.items():
        fields = {f.name for f in dataclasses.fields(cls) if OPTION in f.metadata}
        assert {o.attr for o in TABLE if o.owner == owner and o.keyword} == fields, owner
    assert (flag(Policy, "accept"), flag(Forms, "max_word"), flag(VerifyOptions, "python")) == \
        ("--accept", "--max-word", "--runtime-python")


def test_the_verify_options_are_paths_as_the_api_gives_them():
    v = VerifyOptions(**options.groups(options.bind("build", {"corpus": "c.jsonl"}))["verify"])
    assert v.corpus == Path("c.jsonl") and v.robust == 1.0
