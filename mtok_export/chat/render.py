"""Render a chat template the way transformers does (jinja2, sandboxed, trim/lstrip blocks,
loop controls, `raise_exception`), for lowering decisions and reference renders.  The lowering's
renders of the built-in conversations (`renders`) are cached by content, so a second export of a
model does not import jinja2 for them."""

from __future__ import annotations

from functools import lru_cache

from .. import cache
from . import code_files


class TemplateError(Exception):
    pass


@lru_cache(maxsize=8)
def _compile(text: str, runtime_rules: frozenset = frozenset()):
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        if "raise-exception" in runtime_rules:  # MNN's engine: the call renders "" and rendering goes on
            return ""
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.globals["raise_exception"] = raise_exception
    return env.from_string(text)


def render(text: str, messages, *, bos_token: str = "", eos_token: str = "", add_generation_prompt: bool = True,
           tools=None, runtime_rules: frozenset = frozenset(), **extra) -> str:
    """`runtime_rules`: lint rules (`chat.lint`) to render as MNN's engine does, for verify's projections."""
    return _compile(text, runtime_rules).render(messages=list(messages), bos_token=bos_token, eos_token=eos_token,
                                 add_generation_prompt=add_generation_prompt, tools=tools, **extra)


def renders(text: str, chats, *, bos_token: str = "", eos_token: str = "") -> list[str | None]:
    """`render` of each of `chats` (None where the template raises: it may reject shapes), cached by
    the template, the tokens, the conversations and the code (`code_files`, jinja2's version)."""
    digest = cache.key("chat-renders", text, bos_token, eos_token,
                       [[c.id, list(c.messages), c.add_generation_prompt, c.tools] for c in chats], files=code_files())

    def compute():
        out = []
        for chat in chats:
            try:
                out.append(render(text, chat.messages, bos_token=bos_token, eos_token=eos_token,
                                  add_generation_prompt=chat.add_generation_prompt, tools=chat.tools))
            except Exception:  # noqa: BLE001  a template may reject shapes
                out.append(None)
        return out

    return cache.computed("chat-renders", digest, compute, valid=lambda v: isinstance(v, list) and len(v) == len(chats)
                          and all(x is None or isinstance(x, str) for x in v))


_BOS_PROBE = "\ue000bos_token\ue001"  # private use: never in message contents


def bos_placement(text: str, bos: str, chats) -> str:
    """Where the template renders `bos` over `chats`: "none", "start" (exactly once, first) or
    "elsewhere".  Conversations the template rejects are ignored."""
    if not text or not bos:
        return "none"
    seen = set()
    for out in renders(text, chats, bos_token=_BOS_PROBE):
        if out is None:  # the template rejects the shape; that says nothing about BOS
            continue
        # Count what the template renders for bos_token, not BOS-like text inside the messages.
        n = out.count(_BOS_PROBE)
        seen.add("none" if n == 0 else "start" if n == 1 and out.startswith(_BOS_PROBE) else "elsewhere")
    return "elsewhere" if "elsewhere" in seen else "start" if "start" in seen else "none"
