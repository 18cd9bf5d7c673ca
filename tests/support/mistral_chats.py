"""The proof of the chat templates mistral_common generates (`readers.chat_source`): conversations
mistral_common's `encode_chat_completion` accepts, its ids (the reference), and the generated
template's text rendered by transformers' Jinja and by MNN's, encoded by the exported file on MNN.

`python -m tests.support.mistral_chats` prints k/n per tokenizer file and conversation kind."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import NamedTuple

from mtok_export.corpus import Chat

TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                         "parameters": {"type": "object", "properties": {
                                             "city": {"type": "string", "description": "the city"}},
                                             "required": ["city"]}}}


def conversations() -> list[Chat]:
    u = lambda t: {"role": "user", "content": t}  # noqa: E731
    a = lambda t: {"role": "assistant", "content": t}  # noqa: E731
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "abcDEF123", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}
    # named: a v2 file's generated template refuses a nameless result, which its encoder writes with
    # the name null (`UPSTREAM`), a difference of mistral_common's own, not of the file's form
    result = {"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather", "content": "22 degrees, sunny"}
    return [
        Chat("plain", (u("Hello there"),), tags=("plain",)),
        Chat("unicode", (u("naïve café 数据 🙂 line\nbreak"),), tags=("plain",)),
        Chat("system", ({"role": "system", "content": "Be nice."}, u("Hi")), tags=("system",)),
        Chat("multi-turn", (u("Hi"), a("Hello!"), u("How are you?")), tags=("multi-turn",)),
        Chat("system-multi-turn", ({"role": "system", "content": "Be brief."}, u("Hi"), a("Hello!"),
                                           u("Tell me a joke")), tags=("multi-turn",)),
        Chat("tools", (u("Weather in Paris?"),), [TOOL], tags=("tools",)),
        Chat("tool-call", (u("Weather in Paris?"), call, result), [TOOL], tags=("tool results",)),
        Chat("tool-call-answer", (u("Weather in Paris?"), call, result, a("It is sunny."), u("Thanks")),
                     [TOOL], tags=("tool results",)),
    ]


# Where the template mistral_common 1.13.1 generates differs from its own encode_chat_completion
# (the generated template rendered by transformers' Jinja): a tool result whose content is JSON (the
# encoder parses it into an object, the template writes the string), and, for a v2 file, a tool result
# without a name (the encoder writes null, the template raises).  Not a tokenization difference: shown by
# `tests/readers/test_chat_source.py`, listed by `scripts/chat_families.py`.
UPSTREAM = {
    "json-result": ({"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "abcDEF123", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather", "content": '{"temperature": 18}'}),
    "nameless-result": ({"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "abcDEF123", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "abcDEF123", "content": "sunny"}),
}


def files() -> list[Path]:
    """The tokenizer files mistral_common ships, and the corpus's mistral_common folder's."""
    try:
        import mistral_common
    except ImportError:  # the tests skip
        return []
    data = Path(mistral_common.__file__).parent / "data"
    corpus = Path(__file__).resolve().parents[3] / "shared/corpus/tokenizers/mistral-7b-v0.1_mistral-common"
    return sorted(data.glob("*.json")) + sorted(data.glob("*.model.v*")) + sorted(corpus.glob("*.model.v*"))


class Row(NamedTuple):
    """One conversation: mistral_common's text and ids, and per engine (jinja2, then MNN when run)
    the generated template's render and that render's ids by the exported file on MNN."""

    id: str
    want_text: str
    want_ids: list[int]
    texts: list[str]
    ids: list[list[int]]


def proof(tokenizer_file: Path, convs: list[Chat], *, runtime: bool) -> dict[str, list[Row]]:
    """Per conversation kind, a `Row` per conversation mistral_common encodes (it refuses some: an
    older version has no tools): the generated template rendered (jinja2 / MNN) and encoded by the
    exported file on MNN, against mistral_common's `encode_chat_completion`."""
    from mtok_export.chat.lowering import lower_template
    from mtok_export.formats import read_source
    from mtok_export.targets import TARGETS, build
    from mtok_export.verify.chat_parity import reference_render, runtime_renders
    from mtok_export.verify.reference_mistral import mistral_chats
    from mtok_export.verify.runtime import run_runtime

    tok = read_source(tokenizer_file)
    assert tok.chat.text, tok.chat  # a template is embedded (mistral_common's, or the one it was given)
    bos, eos = tok.chat.bos_token, tok.chat.eos_token
    want_texts, want_ids = mistral_chats(tokenizer_file, convs)
    wanted = [(c, t, i) for c, t, i in zip(convs, want_texts, want_ids) if i is not None]
    texts = [[reference_render(tok.chat.text, c, bos=bos, eos=eos) or "" for c, _, _ in wanted]]
    if runtime:
        lowered = lower_template(tok.chat.text, TARGETS["mnn-3.6"]).text
        texts.append([r or "" for r in runtime_renders([lowered], [c for c, _, _ in wanted], bos=bos, eos=eos)[0]])
    lowered_tok = build(tok, "mtok", target="mnn-3.6", bos="none")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.mtok"
        path.write_bytes(lowered_tok[0])
        got = run_runtime(path, texts=[t for ts in texts for t in ts]).encodes
    n = len(wanted)
    out: dict[str, list[Row]] = {}
    for k, (c, text, ids) in enumerate(wanted):
        out.setdefault(c.tags[0], []).append(Row(c.id, text, ids, [ts[k] for ts in texts],
                                                 [list(got[e * n + k]) for e in range(len(texts))]))
    return out


def embedded_ids_or_refused(tokenizer_file: Path) -> tuple[bool, str]:
    """(whether the default export of `tokenizer_file` is honest about its chats, what was seen): it
    embeds no template and records `chat-template-missing` (refused by default), or the template it
    embeds gives mistral_common's `encode_chat_completion` ids on MNN for every conversation
    mistral_common encodes (a template refusing one counts as a difference)."""
    from mtok_export.formats import read_source
    from mtok_export.targets import build

    tok = read_source(tokenizer_file)
    if not tok.chat.text:
        losses = [x for x in build(tok, "mtok", target="mnn-3.6")[2].losses if x.code == "chat-template-missing"]
        return bool(losses) and "mistral_common" in losses[0].reason, f"no template: {losses}"
    rows = proof(tokenizer_file, conversations(), runtime=True)
    items = [i for v in rows.values() for i in v]
    k = sum(r.want_ids == r.ids[-1] for r in items)
    return k == len(items), f"{tok.chat.kind} template: {k}/{len(items)} chats with mistral_common's ids on MNN"


def main():  # pragma: no cover - a report
    import sys
    runtime = "--runtime" in sys.argv
    for f in files():
        rows = proof(f, conversations(), runtime=runtime)
        cells = []
        for kind, items in rows.items():
            for e, engine in enumerate(("jinja2",) + (("MNN",) if runtime else ())):
                k = sum(r.want_ids == r.ids[e] for r in items)
                cells.append(f"{kind} {engine} {k}/{len(items)}")
        print(f"{f.name}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
