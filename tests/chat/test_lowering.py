"""Tests of `mtok_export.chat.lowering` (and the render parity it is proven by).

For every rewrite rule, a minimal template whose expected output is written here by hand (and
checked against transformers' own renderer): the MNN runtime renders the template as written
differently (or hangs), and renders the lowered template exactly like transformers.  The runtime
gets tools and whole message objects the way `mtok_export.verify.chat_parity` feeds them (jinja.context,
role "json"), which is itself checked here.  Also: the printer keeps expressions intact, the
lowering keeps text and line structure, no corpus template hangs the runtime after lowering, and
the CLI (`mtok lint-template [--fix]`) and the export integration.
"""

from __future__ import annotations

import json
from dataclasses import replace

import jinja2
import pytest

from mtok_export.chat.jinja_emit import emit
from mtok_export.chat.lint import lint_template, parse_environment
from mtok_export.chat.lowering import TemplateHangError, lower_template
from mtok_export.corpus import Chat
from mtok_export.readers.formats.mnn import MTOK
from mtok_export.targets import DEFAULT, TARGETS, names
from mtok_export.verify.chat_parity import (HANG, builtin_conversations, compare, reference_render,
                                            runtime_renders)

from tests.support.commands import run_process
from tests.support.corpus_dirs import CORPUS_TEMPLATES, SAMPLES
from tests.support.marks import needs_mnn


BOS, EOS = "<s>", "</s>"
CHAT = Chat("sys-user", ({"role": "system", "content": "S"}, {"role": "user", "content": "hi"}))
USER = Chat("user", ({"role": "user", "content": "hi"},))
# The runtime probes whether a template wants typed content by looking for a lower-case marker in
# its output: a template that upper-cases the content misleads it, so the case test lower-cases.
MIXED = Chat("mixed", ({"role": "user", "content": "Hi There"},))
MARKUP = Chat("markup", ({"role": "user", "content": "<a & 'b'>"},))
CONVS = [USER, CHAT, MIXED, MARKUP]

# (rule, template, conversation, transformers' output written by hand)
CASES = [
    ("python-literal", "{% if True %}yes{% else %}no{% endif %}", USER, "yes"),
    ("bool-value", "{{ none or 'default' }}|{{ messages[0].content and 'x' }}", USER, "default|x"),
    ("dict-method", "{{ messages[0].get('content') }}|{{ messages[0].get('x', 'd') }}", USER, "hi|d"),
    ("dict-method", "{% for k, v in messages[0].items() %}{{ k }}={{ v }};{% endfor %}", USER,
     "role=user;content=hi;"),
    ("loop-attr", "{% for m in messages %}{% if loop.previtem %}{{ loop.previtem.role }}>{% endif %}"
     "{{ m.role }}{% if loop.nextitem %}<{{ loop.nextitem.role }}{% endif %};{% endfor %}", CHAT,
     "system<user;system>user;"),
    ("loop-attr", "{% for m in messages %}{{ loop.revindex }}{{ loop.revindex0 }}{% endfor %}", CHAT, "2110"),
    ("comment-whitespace", "A\n  {# note #}\nB", USER, "A\nB"),
    ("trailing-newline", "{{ messages[0].content }}\n", USER, "hi"),
    ("trailing-newline", "### Response:\n\n", USER, "### Response:\n"),
    ("set-block", "{% set x %}abc{{ messages[0].role }}\n{% if true %}!{% endif %}{% endset %}[{{ x }}]",
     USER, "[abcuser\n!]"),
    ("set-block", "{% set x %}\n  {# c #}\nA\n{% endset %}  {# d #}\n[{{ x }}]", USER, "  [A\n]"),
    ("macro-default", "{% macro m(a, b='d') %}{{ a }}{{ b }}{% endmacro %}{{ m('x') }}{{ m('x', 'y') }}",
     USER, "xdxy"),
    ("macro-default", "{% macro m(namespace='functions') %}{{ namespace }}{% endmacro %}{{ m() }}", USER,
     "functions"),
    ("filter", "{% for k, v in messages[0]|dictsort %}{{ k }}={{ v }};{% endfor %}", USER,
     "content=hi;role=user;"),
    ("filter", "[{{ undefined_name|default('x') }}][{{ ''|default('y', true) }}]", USER, "[x][y]"),
    ("filter", "{{ ['a', 'b']|join(', ') }}", USER, "a, b"),
    ("filter", "{{ messages|selectattr('role', 'equalto', 'user')|list|length }}"
     "{{ (messages|rejectattr('role', 'equalto', 'user')|first).content }}", CHAT, "1S"),
    ("filter", "{{ messages[0].content|replace('h', 'H') }}", USER, "Hi"),
    ("filter", "[{{ 'n:' + messages[0].description|trim }}]", USER, "[n:]"),
    ("literal-method", "[{{ '  x '.strip() }}]{{ (messages[0].content if true else '').replace('h', 'H') }}",
     USER, "[x]Hi"),
    ("subscript-defined", "{% if messages[0]['tool_calls'] is defined %}calls{% else %}none{% endif %}",
     USER, "none"),
    ("subscript-defined", "{% set d = {'a': 1} %}{% set k = 'b' %}{% if d[k] is defined %}y{% else %}n{% endif %}",
     USER, "n"),
    ("tuple-literal", "{% if 'system' in ('user', 'system') %}yes{% else %}no{% endif %}", USER, "yes"),
    ("runtime-hang", "{% for a, b in [('x', 1), ('y', 2)] %}{{ a }}{{ b }}{% endfor %}", USER, "x1y2"),
    ("runtime-hang", "{{ {'a': {'b': 1}}|tojson }}", USER, '{"a": {"b": 1}}'),
    ("string-method", "{{ messages[0].content.lower() }}", MIXED, "hi there"),
    ("unknown-function", "[{{ dict(a='x').a }}]", USER, "[x]"),
    ("literal-method", "{{ (messages[0].content ~ '!').replace('!', '?') }}|{{ ['a', 'b'][1] }}", USER, "hi?|b"),
    ("if-no-else", "[{{ 'a' if false }}]", USER, "[]"),
    ("tojson-key-order", "{{ {'b': 1, 'a': [true, none, 'x\"y\n']}|tojson }}|{{ 'k' + messages|tojson }}", USER,
     '{"b": 1, "a": [true, null, "x\\"y\\n"]}|k[{"role": "user", "content": "hi"}]'),
    ("tojson-key-order", "{{ {'b': 1, 'a': [true, {}, []], 'c': {'d': none}}|tojson(indent=2) }}", USER,
     '{\n  "b": 1,\n  "a": [\n    true,\n    {},\n    []\n  ],\n  "c": {\n    "d": null\n  }\n}'),
    ("print-value", "{% set d = {'b': 1, 'a': [true, none, \"it's\", 'a\\nb']} %}{{ d|string }}|{{ messages[0].content|string }}",
     USER, "{'b': 1, 'a': [True, None, \"it's\", 'a\\nb']}|hi"),
    ("test", "{% if messages[0].extra is mapping %}m{% else %}n{% endif %}", USER, "n"),
    ("length-undefined", "{{ messages[0].tool_calls|length }}", USER, "0"),
    ("arith-op", "{{ '<i>' * 3 }}", USER, "<i><i><i>"),
    ("filter", "{{ '<b>'|safe + messages[0].content + '</b>'|safe }}", MARKUP, "<b>&lt;a &amp; &#39;b&#39;&gt;</b>"),
]
IDS = [f"{rule}-{i}" for i, (rule, *_rest) in enumerate(CASES)]


@pytest.mark.runtime
@pytest.mark.parametrize("rule,template,conv,expected", CASES, ids=IDS)
def test_rule_is_applied_and_reference_is_right(rule, template, conv, expected):
    assert reference_render(template, conv, bos=BOS, eos=EOS) == expected
    lowered = lower_template(template, TARGETS[DEFAULT])
    assert rule in lowered.fixed
    assert rule not in {f.rule for f in lowered.remaining}, lowered.remaining


@pytest.fixture(scope="module")
def runtime_results():
    # the templates the linter expects to hang run alone: a hang in a batch costs a time-out per
    # split until it is alone (129 s for the three here, 88 s with two of them alone)
    suspects = [i for i, c in enumerate(CASES) if any(f.rule == "runtime-hang" for f in lint_template(c[1]))]
    before = runtime_renders([c[1] for c in CASES], CONVS, bos=BOS, eos=EOS, timeout=8, isolate=suspects)
    after = runtime_renders([lower_template(c[1], TARGETS[DEFAULT]).text for c in CASES], CONVS, bos=BOS, eos=EOS)
    return before, after


@needs_mnn
@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_runtime_before_differs_after_equals(index, runtime_results):
    rule, _template, conv, expected = CASES[index]
    before, after = runtime_results
    k = CONVS.index(conv)
    assert after[index] != HANG and after[index][k] == expected
    assert before[index] == HANG or before[index][k] != expected
    if rule == "runtime-hang" and "for a, b" in CASES[index][1]:
        assert before[index] == HANG


# Whitespace around a comment: (template, whether the runtime keeps some that jinja2 removes).
# The linter reports exactly these, and the lowering moves that whitespace into the comment.
COMMENT_CASES = [
    ("A\n  {# c #}\nB", True),  # indentation before and newline after
    ("A\n  {# c -#}\nB", True),  # indentation only
    ("A\n{# c #}\nB", True),  # newline only
    ("A\n  {#- c -#}\nB", False),  # `-` removes both in both engines
    ("A{{ 'x' -}}\n  {# c -#}B", False),  # the previous tag's `-` removes the indentation
    ("A{# c #}\n{{- 'x' }}B", False),  # the next tag's `-` removes the newline
    ("A {# c #}B", False),  # not at the start of a line: lstrip_blocks does not apply
    ("A\n  {#+ c #}B", False),  # `+` turns lstrip_blocks off: both keep the indentation
    ("A\n  {#+ c #}\nB", True),  # ... but not trim_blocks: the runtime keeps the newline
]


@pytest.mark.parametrize("template,kept", COMMENT_CASES)
def test_comment_whitespace_is_reported_and_lowered(template, kept):
    assert ("comment-whitespace" in {f.rule for f in lint_template(template)}) == kept
    lowered = lower_template(template, TARGETS[DEFAULT])
    assert ("comment-whitespace" in lowered.fixed) == kept
    assert "comment-whitespace" not in {f.rule for f in lint_template(lowered.text)}
    assert reference_render(lowered.text, USER, bos=BOS, eos=EOS) == \
        reference_render(template, USER, bos=BOS, eos=EOS)


@needs_mnn
def test_comment_whitespace_matches_the_runtime():
    templates = [t for t, _kept in COMMENT_CASES]
    before = runtime_renders(templates, [USER], bos=BOS, eos=EOS)
    after = runtime_renders([lower_template(t, TARGETS[DEFAULT]).text for t in templates], [USER], bos=BOS, eos=EOS)
    for (template, kept), b, a in zip(COMMENT_CASES, before, after):
        expected = reference_render(template, USER, bos=BOS, eos=EOS)
        assert (b[0] != expected) == kept, template
        assert a[0] == expected, template


def test_remaining_hang_is_refused():
    with pytest.raises(TemplateHangError, match=r"1:\d+: .*hangs"):
        lower_template("{{ [1 * 2] }}", TARGETS[DEFAULT])


def test_a_template_jinja2_cannot_parse_is_returned_as_written():
    lowered = lower_template("{% if True %}never closed", TARGETS[DEFAULT])
    assert lowered.text == "{% if True %}never closed" and lowered.fixed == ()
    assert [f.rule for f in lowered.remaining] == ["syntax"]


def test_unfixable_constructs_stay_findings_with_positions():
    lowered = lower_template("ok\n{% if loop.index0 % 2 == 0 %}x{% endif %}{{ s[1:] }}", TARGETS[DEFAULT])
    assert [(f.rule, f.line, f.col) for f in lowered.remaining] == [("arith-op", 2, 19), ("string-slice", 2, 46)]
    assert lowered.text == "ok\n{% if loop.index0 % 2 == 0 %}x{% endif %}{{ s[1:] }}"
    assert lowered.fixed == ()


def test_untouched_text_and_lines_are_kept():
    template = "{#- c -#}\n  A {{- x.get('k') -}}  \n{%- if True %}\n B\n{% endif %}  {{ y }}"
    lowered = lower_template(template, TARGETS[DEFAULT])
    assert lowered.text == ("{#- c -#}\n  A {{- x['k'] if 'k' in x else none -}}  \n{%- if true %}\n B\n"
                            "{% endif %}  {{ y }}")


@pytest.mark.parametrize("expr", [
    "a ~ (b + c)", "(a ~ b) + c", "a + b ~ c", "-x|abs", "-(x|abs)", "(a if b else c)|f",
    "a if b else (c if d else e)", "not a == b", "(not a) == b", "x is not defined and y",
    "(a ~ b) is defined", "x[1:-1:2][::2]", "f(1, *a, k=2, **kw)", "{'a': {'b': [1, 2]} }",
    "a in [1, 2] and b not in 'xy'", "(a or b) and c", "x|map(attribute='a')|join(', ')",
    "'it\\'s \\\\ \\n'", "ns.a.b['c'](d)",
])
def test_printer_round_trip(expr):
    env = parse_environment()
    node = env.parse("{{ " + expr + " }}").body[0].nodes[0]
    printed = emit(node)
    assert "}}" not in printed
    assert env.parse("{{ " + printed + " }}").body[0].nodes[0] == node


@pytest.mark.runtime
@pytest.mark.skipif(not CORPUS_TEMPLATES, reason="shared corpus not present")
def test_corpus_lowers_to_parseable_templates_with_the_same_lines():
    for name, text in CORPUS_TEMPLATES:
        lowered = lower_template(text, TARGETS[DEFAULT])
        parse_environment().parse(lowered.text)
        assert lowered.text.count("\n") == text.replace("\r\n", "\n").count("\n"), name
        assert lower_template(text, TARGETS[DEFAULT]) == lowered, name  # deterministic


@needs_mnn
@pytest.mark.skipif(not CORPUS_TEMPLATES, reason="shared corpus not present")
def test_no_corpus_template_hangs_after_lowering():
    lowered = [lower_template(text, TARGETS[DEFAULT]).text for _name, text in CORPUS_TEMPLATES]
    results = runtime_renders(lowered, builtin_conversations(), bos=BOS, eos=EOS, timeout=10)
    assert [n for (n, _t), r in zip(CORPUS_TEMPLATES, results) if r == HANG] == []


# --- parity: what reaches the runtime ------------------------------------------------------------

PROBE = ("{% if tools %}{{ tools|length }}:{{ tools[0].function.name }}{% endif %}|"
         "{% for m in messages %}{{ m.role }}:"
         "{% if m.tool_calls is defined %}{{ m.tool_calls[0].function.name }}"
         "{{ m.tool_calls[0].function.arguments.city }}{% endif %}"
         "{% if m.tool_call_id is defined %}{{ m.tool_call_id }}{% endif %}"
         "{% if m.reasoning_content is defined %}<{{ m.reasoning_content }}>{% endif %}"
         "{% if m.content is string %}{{ m.content }}{% else %}{{ m.content[-1].text }}{% endif %};"
         "{% endfor %}")


def test_builtin_conversations_cover_what_templates_branch_on():
    tags = {t for c in builtin_conversations() for t in c.tags}
    assert {"system", "multi-turn", "empty", "tools", "tool-calls", "tool-results", "reasoning",
            "multimodal", "long", "multilingual", "special"} <= tags


@needs_mnn
def test_tools_and_message_keys_reach_the_runtime():
    convs = {c.id: c for c in builtin_conversations()}
    chosen = [convs["tool-call"], convs["reasoning"], convs["multimodal-parts"]]
    refs = [reference_render(PROBE, c, bos=BOS, eos=EOS) for c in chosen]
    assert refs[0] == ('1:get_weather|user:Weather in Paris?;assistant:get_weatherParis;tool:call1Abcd'
                       '{"temperature": 18, "sky": "cloudy"};user:Should I take an umbrella?;')
    assert refs[1] == "|user:What is 17 * 3?;assistant:<17 * 3 = 51.>51;user:And 17 * 4?;"
    assert refs[2] == "|user:What is in this picture?;assistant:A cat on a sofa.;user:What colour is it?;"
    [got] = runtime_renders([PROBE], chosen, bos=BOS, eos=EOS)
    assert compare(refs, got, chosen).same == [c.id for c in chosen]


def test_compare_skips_what_transformers_cannot_render():
    conv = Chat("parts", ({"role": "user", "content": [{"type": "text", "text": "x"}]},))
    p = compare([None, "[{'type': 'text', 'text': 'x'}]", "a"], [None, "[...]", "b"], [USER, conv, USER])
    assert (p.skipped, p.unsupported, p.differ, p.identical) == (["user"], ["parts"], ["user"], False)
    assert compare(["a"], HANG, [USER]).hang


# --- export and CLI -----------------------------------------------------------------------------


def test_export_embeds_the_lowered_template_and_keeps_the_original():
    from mtok_export.lower import lower
    from mtok_export.readers.model_dir import read_model_dir

    tok = read_model_dir(SAMPLES / "qwen-bpe")
    template = "{% for m in messages %}{{ m.get('content') }}{{ 1 * 2 }}{% endfor %}"
    tok = replace(tok, chat=replace(tok.chat, text=template))
    low, lw = lower(tok, TARGETS[DEFAULT])
    assert low.chat.text == "{% for m in messages %}{{ m['content'] if 'content' in m else none }}{{ 1 * 2 }}{% endfor %}"
    assert lw.chat_original == template
    chat_losses = [loss.reason for loss in lw.losses if loss.code == "chat-template"]
    assert len(chat_losses) == 1 and chat_losses[0].startswith("arith-op x1")
    assert lw.applied["chat template"] == ["dict-method x1"]


def test_export_refuses_a_template_that_would_hang():
    from mtok_export.lower import lower
    from mtok_export.readers.model_dir import read_model_dir

    tok = read_model_dir(SAMPLES / "qwen-bpe")
    with pytest.raises(TemplateHangError):
        lower(replace(tok, chat=replace(tok.chat, text="{{ [1 * 2] }}")), TARGETS[DEFAULT])


def test_cli_reports_fixed_and_remaining(cli, tmp_path):
    path = tmp_path / "t.jinja"
    path.write_text("{{ m.get('k') }}{{ 1 * 2 }}", encoding="utf-8")
    code, out, _ = cli("mtok", "lint-template", path)
    assert code == 1
    assert f"{path}:1:6: dict-method [fixed by lowering]:" in out
    assert f"{path}:1:22: arith-op [remains]:" in out
    assert "2 finding(s), 1 fixed by lowering, 1 remain" in out
    code, out, _ = cli("mtok", "lint-template", path, "--json")
    assert code == 1 and '"fixed": true' in out and '"fixed": false' in out


def test_cli_exit_0_when_lowering_fixes_everything(cli, tmp_path):
    path = tmp_path / "t.jinja"
    path.write_text("{% if True %}{{ m.get('k') }}{% endif %}", encoding="utf-8")
    code, out, _ = cli("mtok", "lint-template", path)
    assert code == 0 and "0 remain" in out
    code, out, _ = cli("mtok", "lint-template", "--fix", path)
    assert (code, out) == (0, "{% if true %}{{ m['k'] if 'k' in m else none }}{% endif %}")


def test_cli_fix_needs_one_template(cli, tmp_path):
    (tmp_path / "a.jinja").write_text("a", encoding="utf-8")
    (tmp_path / "b.jinja").write_text("b", encoding="utf-8")
    code, out, err = cli("mtok", "lint-template", "--fix", tmp_path)
    assert code == 2 and err.startswith("error:") and "exactly one template, found 2" in err


def test_cli_fix_refuses_a_hang(cli, tmp_path):
    path = tmp_path / "t.jinja"
    path.write_text("{{ [1 * 2] }}", encoding="utf-8")
    code, _out, err = cli("mtok", "lint-template", "--fix", path)
    assert code == 2 and err.startswith("error:") and "Traceback" not in err


# the .mtok targets in the registry's order, as `--target`'s refusal lists them (a new target is listed too)
MTOK_TARGETS = ", ".join(names(MTOK))


@pytest.mark.parametrize("target", ["mnn-9", "mnn-legacy"])  # mnn-legacy: a target without a Jinja engine
def test_cli_unknown_target(cli, tmp_path, target):
    path = tmp_path / "t.jinja"
    path.write_text("x", encoding="utf-8")
    code, _out, err = cli("mtok", "lint-template", "--target", target, path)
    assert code == 2 and f"--target {target!r}: choose one of {MTOK_TARGETS}" in err  # as export's
    assert "mnn-legacy" not in err.split("choose one of ")[1]


@pytest.mark.runtime
def test_jinja2_still_parses_everything_lowering_emits():
    # every case's lowered template is valid jinja2 (transformers could render it too)
    for _rule, template, _conv, _expected in CASES:
        try:
            parse_environment().parse(lower_template(template, TARGETS[DEFAULT]).text)
        except jinja2.TemplateSyntaxError as e:  # pragma: no cover
            pytest.fail(f"{template}: {e}")


@pytest.mark.runtime
def test_export_verifies_the_repaired_glm4_guard(tmp_path):
    """GLM-4's `item['tools'] is defined` renders the tools block into every conversation in the
    runtime as written; exported (lowered), the runtime's chat text equals transformers' (exit 0)."""
    template = tmp_path / "glm4.jinja"
    template.write_text("[gMASK]<sop>{% for item in messages %}{% if item['tools'] is defined %}<|system|>\n"
                        "You may call these tools: {{ item['tools'] }}{% endif %}<|{{ item['role'] }}|>\n"
                        "{{ item['content'] }}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}\n")
    r = run_process("mtok-export", "--path", SAMPLES / "qwen-bpe", "--output", tmp_path / "out", "--chat-template",
                    template, "--allow-lossy", "--report", tmp_path / "r.json")
    assert r.returncode == 0, r.stdout + r.stderr
    chat = {c["name"]: c for c in json.loads((tmp_path / "r.json").read_text())["verify"]["checks"]}
    assert chat["chat text"]["ok"] == chat["chat text"]["total"] > 0


def _file_line_col(raw: str, needle: str) -> tuple[int, int]:
    at = raw.index(needle)
    return raw.count("\n", 0, at) + 1, at - raw.rfind("\n", 0, at)


@pytest.mark.parametrize("layout", ["string", "named-list"])
def test_cli_reports_the_position_in_the_json_file(cli, tmp_path, layout):
    """A template inside tokenizer_config.json is one escaped string: the finding's line:col is the
    file's (where an editor jumps), the template's is given too."""
    import json

    template = "{# é \U0001F600 \"q\" #}\n{%- for x in y %}\n  {{ m.get('k') }}\n{%- endfor %}"
    value = template if layout == "string" else [{"name": "default", "template": template}]
    config = {"bos_token": "<s>", "added_tokens_decoder": {"0": {"content": "<unk>"}}, "chat_template": value}
    raw = json.dumps(config, indent=2)  # ensure_ascii: é and the emoji as \u escapes, the emoji as a pair
    assert "\\ud83d\\ude00" in raw and "\\n" in raw
    path = tmp_path / "tokenizer_config.json"
    path.write_text(raw, encoding="utf-8")
    line, col = _file_line_col(raw, "get('k')")  # the dict-method finding points at the method's name
    label = f"{path}" + ("#default" if layout == "named-list" else "")
    code, out, _ = cli("mtok", "lint-template", path)
    assert f"{label}:{line}:{col}: dict-method [fixed by lowering]:" in out and "(template 3:8)" in out, out
    code, out, _ = cli("mtok", "lint-template", path, "--json")
    (finding,) = json.loads(out)["findings"]
    assert (finding["line"], finding["col"], finding["template_line"], finding["template_col"]) == (line, col, 3, 8)


def test_json_string_offsets_count_each_escape_as_one_character():
    from mtok_export.chat.sources import _char_offsets

    raw = '"a\\nb\\u00e9\\ud83d\\ude00\\"c"'
    assert json.loads(raw) == "a\nbé\U0001F600\"c"
    assert _char_offsets(raw, 1, len(raw) - 1) == [1, 2, 4, 5, 11, 23, 25, 26]
