"""Tests of `mtok_export.chat.lint`: positions, a clean template, the corpus, and for every rule a
demonstration against the real MNN runtime that the flagged construct renders differently there.

The runtime demonstrations embed each template in a `.mtok` built by hand from spec section 2.10
(not by the project's writer) and render it with `MNN.llm.apply_chat_template` through
`mtok_export.verify.runtime.run_runtime`; the reference is jinja2 configured like transformers'
`apply_chat_template` (sandbox, trim_blocks, lstrip_blocks, loopcontrols, its `tojson`,
`raise_exception` and `strftime_now`).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from mtok_export.chat.lint import RULES, Finding, GenerationTag, lint_template
from mtok_export.errors import RuntimeEngineError

from tests.support.corpus_dirs import CORPUS_TEMPLATES
from tests.support.marks import needs_mnn

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus"


MESSAGES = [{"role": "user", "content": "hi"}]
BOS, EOS = "<s>", "</s>"
RAISES = object()  # the jinja2 render raises (transformers would fail)
HANGS = object()  # the runtime does not finish


# --- the two engines ----------------------------------------------------------------------------


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' override: insertion order, no HTML escaping
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _raise_exception(message):
    raise jinja2.TemplateError(message)


def render_jinja2(template: str, messages=MESSAGES):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationTag, "jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    try:
        return env.from_string(template).render(messages=messages, bos_token=BOS, eos_token=EOS,
                                                add_generation_prompt=True)
    except jinja2.TemplateError:
        return RAISES
    except TypeError:  # e.g. {% include %} without a loader
        return RAISES


def _s16(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<H", len(data)) + data


def build_mtok(template: str) -> bytes:
    """The spec 2.10 worked example (BPE a/b/ab/<s>) with ``template`` as its chat template."""
    vocab = {"a": 0, "b": 1, "ab": 2, BOS: 3}
    out = b"430 4\n1 1 0\n3 3\n"
    out += b"\x00\x00"  # normalizer none, pre-tokenizer none
    # BPE: vocab size, byte_fallback 0, byte_level 0, one merge
    out += struct.pack("<BIBBI", 0, len(vocab), 0, 0, 1)
    for token, i in sorted(vocab.items(), key=lambda kv: kv[0].encode()):
        out += _s16(token) + struct.pack("<I", i)
    out += struct.pack("<III", 0, 1, 0)  # merge (a, b) rank 0
    out += b"\x00"  # decoder (0 = ByteLevel)
    out += struct.pack("<I", 1) + struct.pack("<IBBB", 3, 1, 0, 0) + _s16(BOS)  # added <s>
    tpl = template.encode("utf-8")
    out += struct.pack("<I", len(tpl)) + tpl  # chat template (u32 length)
    out += _s16(EOS) + b"\x00" + _s16(BOS)  # eos, flags, bos
    out += struct.pack("<H", 0)  # post-processor program: no ops
    return out


def render_mnn(template: str, tmp_path: Path, timeout: float = 60.0, messages=MESSAGES):
    from mtok_export.verify.runtime import run_runtime

    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(build_mtok(template))
    try:
        result = run_runtime(path, chats=[messages], timeout=timeout)
    except RuntimeEngineError as exc:
        if "did not finish" in str(exc):
            return HANGS
        raise
    return result.chats[0]


# --- per-rule demonstrations --------------------------------------------------------------------


@dataclass(frozen=True)
class Demo:
    rule: str
    template: str
    jinja2: object  # expected jinja2 output (str) or RAISES
    mnn: object  # expected runtime output (str) or HANGS
    control: str | None = None  # for HANGS: a fixed template the runtime must finish


DEMOS = [
    Demo("syntax", "{% if true %}never closed", RAISES, "never closed"),
    Demo("runtime-hang", "{{ {'a': {'b': 1}}|tojson }}", '{"a": {"b": 1}}', HANGS,
         control="{{ {'a': {'b': 1} }|tojson }}"),
    Demo("runtime-hang", "{% set pairs = [('a', 1)] %}ok", "ok", HANGS,
         control="{% set pairs = [['a', 1]] %}ok"),
    Demo("arith-op", "{% for m in messages %}{% if loop.index0 % 2 == 0 %}even{% else %}odd"
         "{% endif %}{% endfor %}", "even", "odd"),
    Demo("float-literal", "{{ 1.5 }}", "1.5", "1"),
    Demo("python-literal", "{% if True %}yes{% else %}no{% endif %}", "yes", "no"),
    Demo("string-escape", "{{ '\\u00e9' }}", "\u00e9", "u00e9"),
    Demo("raise-exception", "{% if messages[0].role == 'user' %}{{ raise_exception('no') }}"
         "{% endif %}ok", RAISES, "ok"),
    Demo("unknown-function", "[{{ dict(a='x').a }}]", "[x]", "[]"),
    Demo("dict-method", "{% for k, v in messages[0].items() %}{{ k }}={{ v }};{% endfor %}",
         "role=user;content=hi;", ""),
    Demo("string-method", "{{ messages[0].content.upper() }}", "HI", ""),
    Demo("method", "{% set n = 5 %}[{{ n.bit_length() }}]", "[3]", "[]"),
    Demo("split-default", "{% set s = 'a  b' %}{{ s.split()|length }}", "2", "3"),
    Demo("literal-method", "[{{ '  x '.strip() }}]", "[x]", "[  x ]"),
    Demo("tuple-literal", "{% if 'system' in ('user', 'system') %}yes{% else %}no{% endif %}",
         "yes", "no"),
    Demo("loop-attr", "{% for x in ['a', 'b'] %}{{ loop.revindex }}{% endfor %}", "21", ""),
    Demo("loop-control", "{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}"
         "{% endfor %}", "1", "123"),
    Demo("for-else", "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}", "empty", ""),
    Demo("set-block", "{% set x %}abc{% endset %}[{{ x }}]", "[abc]", "abc[]"),
    Demo("set-tuple", "{% set a, b = [1, 2] %}{{ a }}{{ b }}", "12", ""),
    Demo("filter-block", "{% filter upper %}abc{% endfilter %}", "ABC", "abc"),
    Demo("call-block", "{% macro m() %}[{{ caller() }}]{% endmacro %}{% call m() %}x{% endcall %}",
         "[x]", "x"),
    Demo("caller", "{% macro m() %}[{{ caller() }}]{% endmacro %}{% call m() %}x{% endcall %}",
         "[x]", "x"),
    Demo("macro-default", "{% macro m(a, b='d') %}{{ a }}{{ b }}{% endmacro %}{{ m('x') }}",
         "xd", "x"),
    Demo("unsupported-tag", "{% with x = 1 %}[{{ x }}]{% endwith %}", "[1]", "[]"),
    Demo("unsupported-tag", "{% include 'other.jinja' %}ok", RAISES, "ok"),
    Demo("unsupported-tag", "{% raw %}{{ x }}{% endraw %}", "{{ x }}", ""),
    Demo("unsupported-tag", "{% autoescape true %}{{ '<a>' }}{% endautoescape %}", "&lt;a&gt;",
         "<a>"),
    Demo("filter", "{{ ['a', 'b']|first }}", "a", '["a","b"]'),
    Demo("filter", "{{ ['a', 'b']|join(',') }}", "a,b", '["a","b"]'),
    Demo("filter", "[{{ undefined_name|default('x') }}]", "[x]", "[]"),
    Demo("test", "{% if 2 is even %}even{% else %}odd{% endif %}", "even", "odd"),
    Demo("if-no-else", "[{{ 'a' if false }}]", "[]", "[a]"),
    Demo("bool-value", "{{ none or 'default' }}", "default", "true"),
    Demo("print-value", "{{ 1 == 1 }}", "True", "true"),
    Demo("string-slice", "{% set s = 'hello' %}[{{ s[1:] }}]", "[ello]", "[]"),
    Demo("subscript-defined", "{% if messages[0]['tool_calls'] is defined %}calls{% else %}none"
         "{% endif %}", "none", "calls"),
    Demo("tojson-key-order", "{{ {'b': 1, 'a': 2}|tojson }}", '{"b": 1, "a": 2}',
         '{"a": 2, "b": 1}'),
    Demo("length-undefined", "{{ tools|length }}", "0", "1"),
    Demo("dict-order", "{% for k in {'b': 1, 'a': 2} %}{{ k }}{% endfor %}", "ba", "ab"),
    Demo("comment-whitespace", "A\n  {# note #}\nB", "A\nB", "A\n  \nB"),
    Demo("lstrip-midline", "{% if true %}  {% endif %}|", "  |", "|"),
    Demo("trailing-newline", "{{ 'x' }}\n", "x", "x\n"),
]


def _demo_id(demo: Demo) -> str:
    return demo.rule


def test_every_rule_has_a_demo():
    assert {d.rule for d in DEMOS} == set(RULES)


def test_a_finding_names_a_known_rule():
    with pytest.raises(ValueError, match="unknown lint rule 'runtime-hangs'"):
        Finding(1, 1, "runtime-hangs", "a misspelt id")


@pytest.mark.parametrize("demo", DEMOS, ids=_demo_id)
def test_demo_is_flagged(demo):
    rules = {f.rule for f in lint_template(demo.template)}
    assert demo.rule in rules
    if demo.control is not None:
        assert demo.rule not in {f.rule for f in lint_template(demo.control)}


@pytest.mark.parametrize("demo", DEMOS, ids=_demo_id)
def test_demo_jinja2_reference(demo):
    assert render_jinja2(demo.template) == demo.jinja2


@needs_mnn
@pytest.mark.parametrize("demo", DEMOS, ids=_demo_id)
def test_demo_differs_in_runtime(demo, tmp_path):
    if demo.mnn is HANGS:
        # the control shows the runtime renders the repaired template promptly
        assert render_mnn(demo.control, tmp_path, timeout=60) == render_jinja2(demo.control)
        assert render_mnn(demo.template, tmp_path, timeout=8) is HANGS
    else:
        got = render_mnn(demo.template, tmp_path)
        assert got == demo.mnn
        assert got != render_jinja2(demo.template)


# --- positions ----------------------------------------------------------------------------------

POSITION_TEMPLATE = """\
{%- for m in messages %}
  {%- if loop.index0 % 2 == 0 and True %}{{ m.content.upper() }}{% endif %}
  {{- m['x'] is defined }}{{ m.get('a') or 'b' }}
  {%- for k in m.items() %}{% break %}{% else %}E{% endfor %}
{%- endfor %}
{%- set a, b = [1.5, none] %}{{ ' x '.strip() }}{{ tools|length }}{{ x|first|tojson }}
{{- 'y' if a }}{{ raise_exception('e') }}{{ s[1:] }}{% if 2 is odd %}{% endif %}"""

# (rule, line, col, source text at that position)
EXPECTED_POSITIONS = [
    ("arith-op", 2, 22, "%"),
    ("python-literal", 2, 35, "True"),
    ("string-method", 2, 55, "upper"),
    ("print-value", 3, 7, "m['x']"),
    ("subscript-defined", 3, 17, "defined"),
    ("dict-method", 3, 32, "get"),
    ("bool-value", 3, 41, "or"),
    ("dict-method", 4, 18, "items"),
    ("loop-control", 4, 31, "break"),
    ("for-else", 4, 42, "else"),
    ("set-tuple", 6, 5, "set"),
    ("runtime-hang", 6, 17, "1.5"),
    ("literal-method", 6, 38, "."),
    ("length-undefined", 6, 58, "length"),
    ("filter", 6, 72, "first"),
    ("tojson-key-order", 6, 78, "tojson"),
    ("if-no-else", 7, 9, "if"),
    ("raise-exception", 7, 19, "raise_exception"),
    ("string-slice", 7, 46, "["),
    ("test", 7, 64, "odd"),
]


def test_positions():
    findings = lint_template(POSITION_TEMPLATE)
    lines = POSITION_TEMPLATE.split("\n")
    got = sorted((f.rule, f.line, f.col) for f in findings)
    assert got == sorted((r, line, col) for r, line, col, _ in EXPECTED_POSITIONS)
    for rule, line, col, text in EXPECTED_POSITIONS:
        assert lines[line - 1][col - 1:].startswith(text), (rule, line, col, text)


def test_findings_are_sorted_and_deterministic():
    first = lint_template(POSITION_TEMPLATE)
    assert first == lint_template(POSITION_TEMPLATE)
    assert first == sorted(first, key=lambda f: (f.line, f.col, f.rule))
    assert all(isinstance(f, Finding) and f.line >= 1 and f.col >= 1 for f in first)


def test_nth_occurrence_on_a_line():
    # three `.upper()` on one line: each finding points at its own occurrence
    tpl = "{{ a.upper() }}{{ b.lower() }}{{ c.upper() }}"
    cols = [f.col for f in lint_template(tpl) if f.rule == "string-method"]
    assert cols == [tpl.index("upper") + 1, tpl.index("lower") + 1, tpl.rindex("upper") + 1]


def test_multiline_expression():
    tpl = "{{ messages[0].content\n   * 2 }}"
    [finding] = lint_template(tpl)
    assert (finding.rule, finding.line, finding.col) == ("arith-op", 2, 4)
    assert "`messages[0].content * 2` evaluates as `messages[0].content`" in finding.message


def test_crlf_lines():
    [finding] = lint_template("A\r\n{{ x * 2 }}")
    assert (finding.line, finding.col) == (2, 6)


def test_syntax_error_line():
    findings = lint_template("ok\n{% for x in %}\n")
    assert [(f.line, f.col, f.rule) for f in findings] == [(2, 1, "syntax")]


def test_arith_message_is_concrete():
    [finding] = lint_template("{% for m in messages %}{% if loop.index0 % 2 == 0 %}x{% endif %}"
                              "{% endfor %}")
    assert "`loop.index0 % 2 == 0` evaluates as `loop.index0`" in finding.message


# --- clean templates and what is not flagged ----------------------------------------------------

CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
          "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def test_clean_chatml_has_no_findings():
    assert lint_template(CHATML) == []


@needs_mnn
def test_clean_chatml_renders_the_same(tmp_path):
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    assert render_mnn(CHATML, tmp_path, messages=messages) == render_jinja2(CHATML, messages)


@pytest.mark.parametrize("template", [
    "{% generation %}{{ messages[0].content }}{% endgeneration %}",  # transformers' tag
    "{% for m in messages if m.role == 'user' %}{{ loop.index }}{% endfor %}",
    "{% set ns = namespace(n=0) %}{% set ns.n = ns.n + 1 %}{{ ns.n }}",
    "{% if tools is defined and tools|length > 0 %}{{ tools|length }}{% endif %}",  # guarded
    "{% if 'tool_calls' in m %}{{ m.tool_calls|length }}{% endif %}",  # guarded by the key test
    "{% if x and (y or z) %}{% endif %}{% for m in messages if m.a or m.b %}{% endfor %}",
    "{{ messages[1:]|length }}{% for m in messages[::-1] %}{% endfor %}",  # list slices
    "{{ (messages|map(attribute='role')|list)|length }}",
    "{% set d = {'a': {'b': 1} } %}{{ d.a.b }}",  # nested dict with a space between the braces
    "{{ m.content|tojson }}{{ ('a' ~ m.role)|tojson }}",  # strings: no keys to reorder
    "{{- '\\n' -}}\n",
])
def test_not_flagged(template):
    assert lint_template(template) == []


def test_generation_tag_renders_like_its_body():
    tpl = "<{% generation %}{{ messages[0].content }}{% endgeneration %}>"
    assert render_jinja2(tpl) == "<hi>"


# --- corpus -------------------------------------------------------------------------------------


@pytest.mark.runtime
@pytest.mark.skipif(not CORPUS_TEMPLATES, reason="shared corpus not present")
def test_corpus_lints_without_crashing():
    counts = {}
    for name, text in CORPUS_TEMPLATES:
        findings = lint_template(text)
        assert all(f.rule in RULES for f in findings), name
        assert not any(f.rule == "syntax" for f in findings), name
        counts[name] = len(findings)
    assert len(counts) >= 70
    # the functionary v3.2 template has tuples inside a list literal: the runtime hangs on it
    hang = [t for n, t in CORPUS_TEMPLATES if "functionary-medium-v3.2" in n]
    assert hang and any(f.rule == "runtime-hang" for f in lint_template(hang[0]))
