"""Render a chat template the way transformers does (jinja2, sandboxed, trim/lstrip blocks,
loop controls, `raise_exception`), for lowering decisions and reference renders.  The lowering's
renders of the built-in conversations (`renders`) are cached by content, so a second export of a
model does not import jinja2 for them."""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from functools import lru_cache, wraps

from .. import cache
from ..errors import InputError
from . import code_files

# The budget of one render (issue 25).  Renders of real templates produce a few KB in a few ms; a
# one-line template such as {{ 'x' | center(10**9) }} or {{ messages * 10**8 }} took all memory.
MAX_SIZE = 2**22  # characters or items one operation may produce (repetition, widths, powers' digits)
MEMORY = 512 * 2**20  # bytes a render may add to the address space (RLIMIT_AS, Linux, main thread)
SECONDS = 5.0  # wall time of a render (SIGALRM, main thread)


class TemplateError(Exception):
    pass


class TemplateLimitError(InputError):
    """A render of the chat template went over its budget (exit 2): it names the template line."""


@lru_cache(maxsize=8)
def _compile(text: str, runtime_rules: frozenset = frozenset()):
    # jinja2 (~35 ms): only when a render is not cached (a warm export loads none)
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        if "raise-exception" in runtime_rules:  # MNN's engine: the call renders "" and rendering goes on
            return ""
        raise TemplateError(message)

    class Bounded(ImmutableSandboxedEnvironment):
        """transformers' sandbox, with the operations that make one huge object in a single C call
        (which neither the timer nor a later check could stop) refused past `MAX_SIZE`."""

        intercepted_binops = frozenset({"*", "**", "%"})  # intercepted ones are also never folded at compile time

        def call_binop(self, context, operator, left, right):
            if operator == "*":
                for seq, n in ((left, right), (right, left)):
                    if isinstance(seq, (str, list, tuple)) and _is_int(n) and len(seq) * n > MAX_SIZE:
                        raise _Over(f"repeats {len(seq):,} items {n:,} times")
            elif _is_int(left) and _is_int(right) and abs(left) > 1 and right > 0 \
                    and right * abs(left).bit_length() > 4 * MAX_SIZE:
                raise _Over(f"raises a {abs(left).bit_length()}-bit number to the power {right:,}")
            return super().call_binop(context, operator, left, right)

        def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805  (jinja2's signature)
            if isinstance(getattr(__obj, "__self__", None), (str, bytes)) and __obj.__name__ in _SIZE_METHODS:
                _check_counts(__obj.__name__, args, kwargs)
            return super().call(__context, __obj, *args, **kwargs)

    # optimized=False: no constant folding at compile time, so every operation runs in the render,
    # inside its limits and on a template line
    env = Bounded(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols], optimized=False)
    env.filters.update({name: _counted(name, env.filters[name]) for name in _SIZE_FILTERS})
    env.globals["raise_exception"] = raise_exception
    return env.from_string(text)


class _Over(Exception):
    """An operation over `MAX_SIZE`, raised inside the render (the template line is found after)."""


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_counts(name: str, args, kwargs) -> None:
    """A call given a count or width over `MAX_SIZE` (center(10**9), ljust, indent, slice...)."""
    for x in (*args, *kwargs.values()):
        if _is_int(x) and abs(x) > MAX_SIZE:
            raise _Over(f"calls {name} with {x:,}")


# Filters whose parameters are a width or a count of pieces (the filtered value is not checked: a
# large number may well be printed); other filters' numbers are values, such as default(n).
_SIZE_FILTERS = ("center", "indent", "wordwrap", "truncate", "batch", "slice")
_SIZE_METHODS = {"ljust", "rjust", "center", "zfill", "expandtabs"}  # of str: the result's width


def _counted(name: str, f):
    @wraps(f)
    def filter_(*args, **kwargs):
        _check_counts(name, args[2:] if getattr(f, "jinja_pass_arg", None) else args[1:], kwargs)
        return f(*args, **kwargs)
    return filter_


def render(text: str, messages, *, bos_token: str = "", eos_token: str = "", add_generation_prompt: bool = True,
           tools=None, runtime_rules: frozenset = frozenset(), **extra) -> str:
    """`runtime_rules`: lint rules (`chat.lint`) to render as MNN's engine does, for verify's projections.
    Bounded (`MAX_SIZE`, `MEMORY`, `SECONDS`): `TemplateLimitError` past the budget."""
    with bounded():
        return _compile(text, runtime_rules).render(messages=list(messages), bos_token=bos_token, eos_token=eos_token,
                               add_generation_prompt=add_generation_prompt, tools=tools, **extra)


class _Timeout(Exception):
    """SIGALRM during a render (an Exception: jinja2 maps only those to template lines)."""


@contextmanager
def bounded():
    """The render's memory and time limits (main thread on Linux; elsewhere `MAX_SIZE` alone), and
    what goes over them as `TemplateLimitError` naming the template line.  Also for renders by
    another engine (transformers' `apply_chat_template` in the reference), where only the memory and
    time limits apply."""
    main = threading.current_thread() is threading.main_thread()
    limits = _memory_limit() if main else None
    timer = main and hasattr(signal, "setitimer")
    if timer:
        def alarm(signum, frame):
            raise _Timeout

        previous = signal.signal(signal.SIGALRM, alarm)
        outer, _ = signal.setitimer(signal.ITIMER_REAL, SECONDS)  # a caller's own timer (a fuzzer's) is put back
        started = time.monotonic()
    try:
        yield
    except _Over as e:
        raise TemplateLimitError(f"chat template{_line(e)}: a render {e} (limit {MAX_SIZE:,})") from None
    except MemoryError as e:
        raise TemplateLimitError(f"chat template{_line(e)}: a render needs more than {MEMORY >> 20} MiB") from None
    except _Timeout as e:
        raise TemplateLimitError(f"chat template{_line(e)}: a render takes longer than {SECONDS:g} s") from None
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if outer:  # what was left of it, at once if it ran out during the render
                signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 0.001))
        if limits is not None:
            import resource  # POSIX only: here the limit was set, so it imports

            resource.setrlimit(resource.RLIMIT_AS, limits)


def _memory_limit():
    """Lower the address-space limit to what the process uses now plus `MEMORY` -> the limits to
    restore, or None where it cannot be done (no /proc, a lower limit already)."""
    try:
        import resource  # POSIX only: elsewhere (ImportError, below) a render has no memory limit

        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limits = resource.getrlimit(resource.RLIMIT_AS)
        cap = used + MEMORY
        if limits[0] != resource.RLIM_INFINITY and limits[0] <= cap:
            return None
        resource.setrlimit(resource.RLIMIT_AS, (cap, limits[1]))
        return limits
    except (OSError, ValueError, ImportError):
        return None


def _line(e: BaseException) -> str:
    """", line N" of the innermost template frame in `e`'s traceback (jinja2 maps its frames to the
    template's lines), or ""."""
    line, tb = None, e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return f", line {line}" if line else ""


def renders(text: str, chats, *, bos_token: str = "", eos_token: str = "") -> list[str | None]:
    """`render` of each of `chats` (None where the template raises: it may reject shapes), cached by
    the template, the tokens, the conversations and the code (`code_files`, jinja2's version)."""
    digest = cache.key("chat-renders", text, bos_token, eos_token,
                       [[c.id, list(c.messages), c.add_generation_prompt, c.tools] for c in chats], files=code_files(),
                       dated=True)

    def compute():
        out = []
        for chat in chats:
            try:
                out.append(render(text, chat.messages, bos_token=bos_token, eos_token=eos_token,
                                  add_generation_prompt=chat.add_generation_prompt, tools=chat.tools))
            except TemplateLimitError:  # raised, never cached as what the template does
                raise
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
