"""Render parity: a chat template rendered by transformers vs by MNN's runtime, conversation by
conversation (DESIGN 5.1: the proof that a lowered template is right).

The reference is transformers' own ``render_jinja_template`` with the template as written; the
runtime is the PyPI ``MNN`` package (in a subprocess, :func:`mtok_export.verify.runtime.run_runtime`)
rendering the template we would embed.  Both always add the generation prompt: the runtime's
``apply_chat_template`` cannot switch it off.

How the runtime gets what the template branches on (read in MNN 3.6.1's ``tokenizer.cpp``,
``llm.cpp`` and ``jinja.hpp``, then checked on the runtime):

* every message is passed with role ``"json"`` and the whole message object as its content;
  the engine parses it back, so ``tool_calls``, ``tool_call_id``, ``reasoning_content`` and list
  contents (multimodal parts) reach the template;
* ``tools`` (and ``documents``) go in ``llm_config.json``'s ``jinja.context``, whose keys become
  template variables; the engine itself never sets ``tools``.  They are passed as ``null`` when
  absent, as transformers passes ``None``;
* like transformers 5, ``reasoning_content``/``thinking``/``reasoning`` are aliased into each other
  before rendering, so both engines see the same message keys.

One runtime behaviour shows up here and nowhere else: before rendering, the engine renders the
template once with a string content and once with ``[{type: text}]`` parts and, if only the
second output holds its (lower-case) probe text, wraps every string content into parts.  A
template that does not print the content verbatim (``|upper``, a length) can trip it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..corpus import Chat
from ..errors import RuntimeEngineError
from ..ir.decoders import ByteLevel
from ..ir.models import BPE
from ..ir.tokenizer import ChatTemplate, Tokenizer
from ..mtok import write_mtok
from .runtime import run_runtime

__all__ = ["TemplateParity", "builtin_conversations", "reference_render",
           "render_request", "runtime_renders", "compare"]

_REASONING_KEYS = ("reasoning_content", "thinking", "reasoning")
HANG = "hang"  # a template render that did not finish


def builtin_conversations() -> tuple[Chat, ...]:
    """The built-in conversations (``mtok_export/data/conversations.jsonl``): system / no system,
    multi-turn, empty content, tools, tool calls (dict and string arguments, parallel), tool
    results, reasoning, multimodal parts, long multilingual text, special-token text; one tool's
    parameters and arguments are not in alphabetical order (the runtime's tojson sorts keys)."""
    raw = resources.files("mtok_export").joinpath("data", "conversations.jsonl").read_text("utf-8")
    out = []
    for line in raw.splitlines():
        if line.strip():
            obj = json.loads(line)
            out.append(Chat(obj["id"], tuple(obj["messages"]), obj.get("tools"),
                                    tuple(obj.get("tags", ()))))
    return tuple(out)


def _aliased(message: dict) -> dict:
    """transformers 5 fills `reasoning_content` and `thinking` from whichever reasoning key is set."""
    reasoning = next((message[k] for k in _REASONING_KEYS if message.get(k) is not None), None)
    if reasoning is None:
        return dict(message)
    return {"thinking": reasoning, **message, "reasoning_content": reasoning}


def reference_render(template: str, conv: Chat, *, bos: str, eos: str) -> str | None:
    """transformers' rendering of ``conv`` (None when the template raises for it)."""
    # transformers (~0.7 s): only when chats are checked
    from transformers.utils.chat_template_utils import render_jinja_template

    try:
        rendered, _ = render_jinja_template([[_aliased(m) for m in conv.messages]], tools=conv.tools,
                                            chat_template=template, add_generation_prompt=True,
                                            bos_token=bos, eos_token=eos, **dict(conv.context))
    except Exception:  # noqa: BLE001  any template error: transformers renders nothing either
        return None
    return rendered[0]


def _render_item(template: str, conv: Chat, eos: str) -> dict:
    messages = [{"role": "json", "content": json.dumps(_aliased(m), ensure_ascii=False)}
                for m in conv.messages]
    context = {"tools": conv.tools, "documents": None, **dict(conv.context)}
    return {"jinja": {"chat_template": template, "eos": eos, "context": context}, "messages": messages}


def _tiny_mtok(bos: str, eos: str) -> bytes:
    """A one-token `.mtok` whose only job is to give the runtime its `bos_token` (the `jinja`
    block of llm_config.json sets the template and eos, never bos)."""
    return write_mtok(Tokenizer(model=BPE({"a": 0}), decoder=ByteLevel(),
                                chat=ChatTemplate(bos_token=bos, eos_token=eos)))


def render_request(template: str, convs: Sequence[Chat], *, bos: str, eos: str,
                   timeout: float = 10.0) -> tuple[list[dict], tuple[bytes, float]]:
    """`run_runtime`'s `renders` and `renders_apart` to render `convs` with `template` in a runtime
    process that does other work first (verify's): the requests, and the one-token tokenizer giving
    `bos` with the seconds they may take (as `runtime_renders` gives a template)."""
    items = [_render_item(template, c, eos) for c in convs]
    return items, (_tiny_mtok(bos, eos), _seconds(timeout, items))


def _seconds(timeout: float, items: list) -> float:
    """What a batch of renders may take: `timeout` per template, and a little per render."""
    return timeout + 0.05 * len(items)


def runtime_renders(templates: Sequence[str], convs: Sequence[Chat], *, bos: str, eos: str,
                    python=None, timeout: float = 10.0, isolate=()) -> list[list[str | None] | str]:
    """Per template: the runtime's rendering of each conversation (None: the runtime raised), or
    :data:`HANG` when it did not finish (or crashed).  Templates run in batches in one process;
    a batch that fails is split until the failing template is alone.  ``timeout`` is what one
    template may take (a render takes milliseconds).  The templates at ``isolate`` (e.g. those
    the linter expects to hang) run alone, which saves the splitting."""
    results: list = [None] * len(templates)
    with tempfile.TemporaryDirectory(prefix="mtok-parity-") as tmp:
        path = Path(tmp) / "tokenizer.mtok"
        path.write_bytes(_tiny_mtok(bos, eos))

        def run(indices: list[int]) -> None:
            items = [_render_item(templates[i], c, eos) for i in indices for c in convs]
            try:
                res = run_runtime(path, renders=items, python=python, timeout=_seconds(timeout, items))
            except RuntimeEngineError:
                if len(indices) == 1:
                    results[indices[0]] = HANG
                    return
                half = len(indices) // 2
                run(indices[:half])
                run(indices[half:])
                return
            for k, i in enumerate(indices):
                results[i] = list(res.renders[k * len(convs):(k + 1) * len(convs)])

        alone = sorted(set(isolate))
        for i in alone:
            run([i])
        rest = [i for i in range(len(templates)) if i not in alone]
        if rest:
            run(rest)
    return results


@dataclass
class TemplateParity:
    """One template over the conversations: which render identically, differ, or cannot be
    compared (transformers raised: nothing to compare with)."""

    same: list[str] = field(default_factory=list)
    differ: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # transformers raised
    unsupported: list[str] = field(default_factory=list)  # list contents printed as Python repr
    hang: bool = False
    first_diff: tuple[str, str, str] | None = None  # (conversation, expected, got)

    @property
    def identical(self) -> bool:
        return not self.hang and not self.differ and bool(self.same)


def prints_parts(rendered: str, conv: Chat) -> bool:
    """Whether transformers printed a list content (multimodal parts) as a Python list: the
    template does not support content parts, and what it renders is no prompt at all (the runtime
    prints JSON there), so the conversation is not compared."""
    return any(not isinstance(m.get("content"), str) and str(m["content"]) in rendered
               for m in conv.messages)


def compare(references: Sequence[str | None], runtime: list[str | None] | str,
            convs: Sequence[Chat]) -> TemplateParity:
    """Compare transformers' renders with the runtime's for one template.  A conversation is
    not compared when transformers raises for it or prints its content parts as a Python list."""
    p = TemplateParity()
    if runtime == HANG:
        p.hang = True
        return p
    for conv, want, got in zip(convs, references, runtime):
        if want is None:
            p.skipped.append(conv.id)
        elif prints_parts(want, conv):
            p.unsupported.append(conv.id)
        elif want == got:
            p.same.append(conv.id)
        else:
            p.differ.append(conv.id)
            if p.first_diff is None:
                p.first_diff = (conv.id, want, got)
    return p
