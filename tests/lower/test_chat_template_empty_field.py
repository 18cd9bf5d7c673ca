"""An emptied BOS field (issue 31, class 4): when the header prefix adds BOS, the lowering empties the
file's bos field, and MNN then leaves `bos_token` undefined (spec 8.7).  Printed alone that is
harmless, but Llama-3.1's `{% set content = bos_token + content %}` makes a list of an undefined
and a string.  `lower.chat_template.defined_as_empty` sets it to '' first; each template here is rendered
by MNN 3.6.1 with the field empty and by transformers with bos_token '' (the same render as the
source's minus its leading BOS)."""

from __future__ import annotations

import pytest

from mtok_export.chat.environment import parse_environment
from mtok_export.chat.lowering import lower_template, used_beyond_print
from mtok_export.corpus import Chat
from mtok_export.lower.chat_template import EMPTY_DEFINITION, defined_as_empty
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.chat_parity import builtin_conversations, reference_render, runtime_renders

from tests.support.corpus_dirs import CORPUS_TEMPLATES
from tests.support.marks import needs_mnn

EOS = "<|eot_id|>"
CHAT = Chat("sys-user", ({"role": "system", "content": "S"}, {"role": "user", "content": " hi "}))
LLAMA31 = ("{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
           "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + "
           "'<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}"
           "{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant"
           "<|end_header_id|>\n\n' }}{% endif %}")
# (name, template): bos_token in `+`, `~`, filters, tests, comparisons, conditions, a macro, a
# namespace, and after leading whitespace that trim_blocks / lstrip_blocks act on.
EXPRESSIONS = [
    ("llama-3.1", LLAMA31),
    ("concat", "{{ bos_token + messages[0].content }}|{{ bos_token ~ 'x' }}"),
    ("filters", "[{{ bos_token|trim }}][{{ bos_token|length }}][{{ (bos_token|upper) + 'a' }}]"),
    ("tests", "{% if bos_token is defined %}d{% endif %}{% if bos_token is string %}s{% endif %}"
              "{% if bos_token == '' %}e{% endif %}{% if bos_token %}b{% else %}n{% endif %}"
              "{% if not bos_token %}!{% endif %}"),
    ("macro", "{% macro turn(m) %}{{ bos_token + m.role }}{% endmacro %}{% for m in messages %}{{ turn(m) }};"
              "{% endfor %}"),
    ("namespace", "{% set ns = namespace(t=bos_token) %}{% for m in messages %}{% set ns.t = ns.t + m.content %}"
                  "{% endfor %}{{ ns.t }}"),
    ("leading-newline", "\n{{ bos_token + 'a' }}\nz"),
    ("leading-block", "  {% if true %}{{ bos_token + 'a' }}{% endif %}\nb"),
    ("leading-trim", "\n  {%- if messages %}{{ bos_token + 'a' }}{% endif -%}\n  x"),
]
CONVS = [CHAT]


def test_only_uses_beyond_printing_count():
    assert used_beyond_print("{{ bos_token }}{% for m in messages %}{{- bos_token -}}{% endfor %}", ["bos_token"]) == []
    assert used_beyond_print("{% set bos_token = 'x' %}{{ bos_token }}", ["bos_token"]) == []  # a store is no use
    for name, template in EXPRESSIONS:
        assert used_beyond_print(template, ["bos_token", "eos_token"]) == ["bos_token"], name


def test_definition_renders_nothing_in_jinja2():
    """transformers' environment: the definition line renders nothing, and the template after it
    renders as before with bos_token '' (the newline is trim_blocks'; lstrip_blocks still applies
    to the template's first line)."""
    env = parse_environment()
    assert EMPTY_DEFINITION.format("bos_token").endswith("%}\n")
    for name, template in EXPRESSIONS:
        want = env.from_string(template).render(messages=list(CHAT.messages), bos_token="", eos_token=EOS,
                                                add_generation_prompt=True)
        got = env.from_string(defined_as_empty(template, ["bos_token"])).render(
            messages=list(CHAT.messages), eos_token=EOS, add_generation_prompt=True)
        assert got == want, name


@needs_mnn
def test_runtime_renders_emptied_bos_like_transformers():
    names = [n for n, _ in EXPRESSIONS]
    lowered = [lower_template(t, TARGETS[DEFAULT]).text for _, t in EXPRESSIONS]
    want = [[reference_render(t, c, bos="", eos=EOS) for c in CONVS] for _, t in EXPRESSIONS]
    before = runtime_renders(lowered, CONVS, bos="", eos=EOS)  # the field empty: bos_token undefined
    after = runtime_renders([defined_as_empty(t, ["bos_token"]) for t in lowered], CONVS, bos="", eos=EOS)
    assert dict(zip(names, after)) == dict(zip(names, want))
    assert before[0] != want[0] and "__jinja_undefined__" in before[0][0]  # the render
    assert sum(b != w for b, w in zip(before, want)) >= 5  # most shapes differ with bos_token undefined


@needs_mnn
def test_corpus_templates_with_bos_in_expressions():
    """Every corpus template that uses bos_token beyond printing it: with the field empty and the
    definition, the runtime renders each built-in conversation as transformers renders it with
    bos_token '' wherever it does so with a non-empty BOS (what else differs is not BOS's)."""
    convs = list(builtin_conversations())
    chosen = [(n, t, lower_template(t, TARGETS[DEFAULT]).text) for n, t in CORPUS_TEMPLATES
              if "bos_token" in t and _lowerable(t)]
    chosen = [(n, t, low) for n, t, low in chosen if used_beyond_print(low, ["bos_token"])]
    if not chosen:
        pytest.skip("no corpus template uses bos_token in an expression")
    bos = "<|begin_of_text|>"
    with_bos = runtime_renders([low for _, _, low in chosen], convs, bos=bos, eos=EOS)
    empty = runtime_renders([defined_as_empty(low, ["bos_token"]) for _, _, low in chosen], convs, bos="", eos=EOS)
    fixed = 0
    for (name, text, _), full, got in zip(chosen, with_bos, empty):
        for c, f, g in zip(convs, full, got):
            if f is not None and f == reference_render(text, c, bos=bos, eos=EOS):
                assert g == reference_render(text, c, bos="", eos=EOS), (name, c.id)
                fixed += 1
    assert fixed >= 30


def _lowerable(text: str) -> bool:
    try:
        lower_template(text, TARGETS[DEFAULT])
        return True
    except Exception:  # noqa: BLE001  a template that hangs the runtime is refused, not rendered here
        return False
