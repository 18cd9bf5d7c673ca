"""Chat-template work at export time is bounded (issue 25): renders of the built-in conversations
(BOS placement, special-token probes) run under `chat.render`'s budget, so a one-line template
that makes a huge object is exit 2 naming the template line instead of taking all memory, and a
template too large to parse in bounded time is refused with its size.

The hostile templates run in a child process under a memory limit (unbounded, some took 24 GB)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.limits import export_cli, limited
from mtok_export.chat import nesting
from mtok_export.chat.render import MAX_SIZE, TemplateLimitError, render
from mtok_export.errors import UnsupportedError

REPO = Path(__file__).resolve().parents[2]
LLAMA2 = REPO / "samples/llama-spm"
TEMPLATES = REPO.parent / "shared/corpus/chat_templates"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="rlimits, SIGALRM and /proc as on Linux")


def with_template(tmp_path: Path, template: str) -> Path:
    d = tmp_path / "model"
    shutil.copytree(LLAMA2, d)
    config = json.loads((d / "tokenizer_config.json").read_text())
    config["chat_template"] = template
    (d / "tokenizer_config.json").write_text(json.dumps(config))
    return d


HOSTILE = {  # template -> what the error says (each took all memory, or hung, before)
    "{{ 'x' | center(10**9) }}": "a render calls center with 1,000,000,000",
    "{{ 'a' * 10**9 }}": "a render repeats 1 items 1,000,000,000 times",
    "{{ messages * 10**8 }}": "a render repeats 1 items 100,000,000 times",
    "{{ 'x'.ljust(10**9) }}": "a render calls ljust with 1,000,000,000",
    "{{ 2 ** 99999999999 }}": "a render raises a 2-bit number to the power 99,999,999,999",
    "{{ '%0999999999d' % 1 }}": "a render needs more than 512 MiB",
    "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}":
        "a render needs more than 512 MiB",
}


@pytest.mark.runtime
@pytest.mark.parametrize("template", list(HOSTILE), ids=range(len(HOSTILE)))
def test_hostile_one_liner_is_exit_2_within_bounds(tmp_path, template):
    run = limited(export_cli("--path", str(with_template(tmp_path, template)), "--no-verify", "--allow-lossy",
                             "-o", str(tmp_path / "out")), env={"MTOK_CACHE_DIR": str(tmp_path / "cache")})
    assert run.code == 2, run.err
    assert f"error: chat template, line 1: {HOSTILE[template]}" in run.err, run.err
    assert "Traceback" not in run.err
    assert run.seconds < 20 and run.peak_mib < 1024, (run.seconds, run.peak_mib)
    assert not (tmp_path / "out").exists()


@pytest.mark.runtime
def test_a_render_that_runs_too_long_names_its_line(tmp_path):
    template = "{% for i in range(99999) %}\n{% for j in range(99999) %}{% endfor %}{% endfor %}"
    run = limited(export_cli("--path", str(with_template(tmp_path, template)), "--no-verify", "--allow-lossy",
                             "-o", str(tmp_path / "out")), env={"MTOK_CACHE_DIR": str(tmp_path / "cache")})
    assert run.code == 2 and "error: chat template, line 2: a render takes longer than 5 s" in run.err, run.err
    assert run.seconds < 20, run.seconds


@pytest.mark.runtime
def test_a_failed_render_is_never_cached(tmp_path):
    # the render cache (cache kind chat-renders) would otherwise answer the next export with
    # "the template rejects every conversation"
    model = with_template(tmp_path, "{{ 'a' * 10**9 }}")
    env = {"MTOK_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        run = limited(export_cli("--path", str(model), "--no-verify", "--allow-lossy", "-o", str(tmp_path / "out")),
                      env=env)
        assert run.code == 2 and "a render repeats" in run.err, run.err
    assert not list((tmp_path / "cache").glob("chat-renders/*"))


def test_limit_error_is_an_input_error_with_the_line():
    with pytest.raises(TemplateLimitError, match=r"^chat template, line 3: a render repeats 2 items") as info:
        render("a\nb\n{{ 'ab' * 10**8 }}", [])
    assert info.value.exit_code == 2
    assert render("{{ 'ab' * n }}", [], n=MAX_SIZE // 2) == "ab" * (MAX_SIZE // 2)  # at the limit: rendered


def test_the_limits_are_restored_after_a_render():
    import resource
    import signal

    before = resource.getrlimit(resource.RLIMIT_AS), signal.getsignal(signal.SIGALRM)
    with pytest.raises(TemplateLimitError):
        render("{{ 'x' | center(10**9) }}", [])
    render("{{ 1 }}", [])
    assert (resource.getrlimit(resource.RLIMIT_AS), signal.getsignal(signal.SIGALRM)) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.runtime
@pytest.mark.skipif(not TEMPLATES.is_dir(), reason="shared corpus not present")
def test_real_templates_render_as_in_an_unbounded_sandbox():
    # differential: the bounded environment (no constant folding, counted filters) renders every
    # corpus template like transformers' plain ImmutableSandboxedEnvironment
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from mtok_export.corpus import builtin_chats

    def raise_exception(message):
        raise ValueError(message)

    plain = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    plain.globals["raise_exception"] = raise_exception
    chats = builtin_chats()
    compared = 0
    for path in sorted(TEMPLATES.rglob("*.jinja")):
        text = path.read_text(encoding="utf-8")
        try:
            reference = plain.from_string(text)
        except Exception:  # noqa: BLE001  jinja2 cannot parse it: not a render question
            continue
        for chat in chats:
            kwargs = dict(bos_token="<s>", eos_token="</s>", add_generation_prompt=chat.add_generation_prompt,
                          tools=chat.tools)
            try:
                want = reference.render(messages=list(chat.messages), **kwargs)
            except Exception:  # noqa: BLE001
                want = None
            try:
                got = render(text, chat.messages, **kwargs)
            except TemplateLimitError:
                raise
            except Exception:  # noqa: BLE001
                got = None
            assert got == want, (path.name, chat.id)
            compared += want is not None
    assert compared > 100


def test_template_size_and_tag_limits():
    at_limit = "{{ x }}" * nesting.MAX_TAGS
    nesting.check_template(at_limit, "t")
    with pytest.raises(UnsupportedError, match=rf"t: chat template has {nesting.MAX_TAGS + 1:,} tags "
                                               rf"\(limit {nesting.MAX_TAGS:,}; tag {nesting.MAX_TAGS + 1:,} is at 2:8\)"):
        nesting.check_template("{{ x }}" * (nesting.MAX_TAGS - 1) + "\n{{ y }}" + "{{ z }}", "t")
    with pytest.raises(UnsupportedError, match=rf"chat template has {nesting.MAX_CHARS + 1:,} characters"):
        nesting.check_template("x" * (nesting.MAX_CHARS + 1), "t")


@pytest.mark.runtime
@pytest.mark.parametrize("n,words", [(100_000, "chat template has 2,500,015 characters (limit 262,144)"),
                                     (50_000, "chat template has 50,001 tags (limit 4,096")])
def test_100k_expressions_refused_quickly(tmp_path, n, words):
    expression = "{{ messages[0].content }}" if n == 100_000 else "{{a}}"  # the short one fits the size limit
    model = with_template(tmp_path, "{{ bos_token }}" + expression * n)
    run = limited(export_cli("--path", str(model), "--no-verify", "--allow-lossy", "-o", str(tmp_path / "out")),
                  env={"MTOK_CACHE_DIR": str(tmp_path / "cache")})
    assert run.code == 2 and words in run.err, run.err
    assert run.seconds < 10, run.seconds  # was 17 s of parsing and lowering


def test_a_callers_timer_survives_a_render():
    # the fuzzers' hang alarm (and any caller's) shares ITIMER_REAL with the render's time limit
    import signal

    signal.setitimer(signal.ITIMER_REAL, 100)
    try:
        render("{{ 1 }}", [])
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 90 < left <= 100
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@pytest.mark.runtime
def test_the_reference_render_by_transformers_is_bounded_too():
    # verify's reference renders with transformers' own sandbox: only the memory and time limits
    # apply there, and going over them is an error, not "the template rejects this conversation"
    from mtok_export.corpus import builtin_chats
    from mtok_export.verify.reference import _chats

    chats = [c for c in builtin_chats() if c.add_generation_prompt][:1]
    with pytest.raises(TemplateLimitError, match=r"^chat template, line 1: a render needs more than 512 MiB"):
        _chats(LLAMA2, chats, template="{{ 'a' * 10**9 }}")
    texts, _ = _chats(LLAMA2, chats, template="{{ 'a' * 3 }}")
    assert texts == ["aaa"]


def test_large_numbers_as_values_are_not_counts():
    # only widths and counts are limited: a big number printed, filtered or passed as a value renders
    big = 10**12
    assert render("{{ n }}{{ n | string }}{{ x | default(n) }}{{ namespace(v=n).v }}{{ 'ab'.split('a', n) }}",
                  [], n=big) == f"{big}{big}{big}{big}" + "['', 'b']"
