"""The chat-template pass and the template depth check are cached by content (`lower/chat_template.py`,
`chat/nesting.py`): a hit must give what a fresh computation gives (the embedded text, the rewrites,
every loss field), a broken or ill-shaped entry is recomputed, and a changed input (template,
the target's Jinja engine, the code computing it) is a different entry."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mtok_export import cache
from mtok_export.chat import code_files, nesting
from mtok_export.chat.lowering import TemplateHangError
from mtok_export.errors import UnsupportedError
from mtok_export.lower import Lowering
from mtok_export.lower import chat_template as C
from mtok_export.target_type import MNN_JINJA, JinjaEngine
from mtok_export.targets import DEFAULT, TARGETS

TEMPLATES = {
    "rewrites": "{#- c -#}\n  A {{- x.get('k') -}}  \n{%- if True %}\n B\n{% endif %}  {{ y }}",
    "remaining": "ok\n{% if loop.index0 % 2 == 0 %}x{% endif %}{{ s[1:] }}\n{{ t[2:] }}{{ u[:1] }}{{ v[3:] }}",
    "both": "{{ messages|tojson }}{% for m in messages %}{{ m.content[1:] }}{% endfor %}{{ None }}",
    "syntax": "{% if True %}never closed",
    "plain": "hello",
}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    return tmp_path


def _state(text: str, target=TARGETS[DEFAULT]):
    lw = Lowering(target)
    out = C.lint_chat_template(lw, text)
    return out, lw.losses, lw.applied, lw.chat_original


def _entries(cache_dir):
    return sorted((cache_dir / C.KIND).glob("*.json"))


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_hit_is_what_a_miss_computes(cache_dir, monkeypatch, name):
    miss = _state(TEMPLATES[name])
    assert len(_entries(cache_dir)) == 1

    def never(*a):
        raise AssertionError("computed on a warm cache")

    monkeypatch.setattr(C, "outcome_of", never)
    assert _state(TEMPLATES[name]) == miss


def test_the_cases_cover_rewrites_losses_and_notes(cache_dir):
    """The templates above exercise every field of the cached value (else the equality is vacuous)."""
    out, losses, applied, original = _state(TEMPLATES["both"])
    assert out != TEMPLATES["both"] and original == TEMPLATES["both"]
    assert applied["chat template"] and losses
    assert {x.trigger[0] for x in losses} >= {"string-slice"}
    _, losses, applied, original = _state(TEMPLATES["remaining"])
    assert [x.json_path for x in losses][:1] == ["$.chat_template@2:19"] and applied == {} and original == ""
    assert any(x.json_path.endswith(" ...") for x in losses)  # more than three places of one rule


def test_a_broken_entry_is_recomputed(cache_dir):
    fresh = _state(TEMPLATES["both"])
    (entry,) = _entries(cache_dir)
    good = entry.read_text(encoding="utf-8")
    value = json.loads(good)
    bad_values = ["{not json", json.dumps([]), json.dumps({**value, "text": 1}),
                  json.dumps({**value, "losses": [["$.chat_template@1:1", "reason"]]}),
                  json.dumps({**value, "rewrites": [["tojson-key-order", "1"]]}),
                  json.dumps({k: v for k, v in value.items() if k != "rewrites"})]
    for bad in bad_values:
        entry.write_text(bad, encoding="utf-8")
        assert _state(TEMPLATES["both"]) == fresh, bad
        assert entry.read_text(encoding="utf-8") == good  # stored again


def test_a_wrong_but_well_formed_entry_is_what_is_used(cache_dir):
    """The check above is the hit itself, not a recomputation hidden behind it: an entry of the
    right shape is returned as stored."""
    _state(TEMPLATES["plain"])
    (entry,) = _entries(cache_dir)
    entry.write_text(json.dumps({"text": "planted", "rewrites": [["python-literal", 2]],
                                 "losses": [["$.chat_template@9:9", "planted reason", "arith-op"]],
                                 "beyond_print": []}))
    out, losses, applied, original = _state(TEMPLATES["plain"])
    assert (out, original, applied) == ("planted", TEMPLATES["plain"], {"chat template": ["python-literal x2"]})
    assert [(x.json_path, x.reason, x.trigger) for x in losses] == [("$.chat_template@9:9", "planted reason",
                                                                     ("arith-op",))]


def test_the_key_holds_template_engine_and_code(cache_dir, tmp_path):
    _state(TEMPLATES["rewrites"])
    _state(TEMPLATES["rewrites"] + " ")
    # another engine (of a release whose rules exist): its own entry
    _state(TEMPLATES["rewrites"], replace(TARGETS[DEFAULT], jinja=JinjaEngine("another engine", MNN_JINJA.version)))
    assert len(_entries(cache_dir)) == 3
    _state(TEMPLATES["rewrites"], TARGETS["mnn-head"])  # the default's engine: its entry
    assert len(_entries(cache_dir)) == 3
    files = code_files()
    assert {f.parent.name for f in files} == {"chat", "jinja2", "markupsafe"}
    base = cache.key(C.KIND, "t", TARGETS[DEFAULT].jinja, files=files)
    edited = tmp_path / files[0].name
    edited.write_bytes(files[0].read_bytes() + b"\n# edited\n")
    assert cache.key(C.KIND, "t", TARGETS[DEFAULT].jinja, files=(edited, *files[1:])) != base


def test_a_hanging_template_raises_every_time_and_is_not_cached(cache_dir):
    for _ in range(2):
        with pytest.raises(TemplateHangError):
            _state("{{ [1 * 2] }}")
    assert _entries(cache_dir) == []


def test_depth_check_is_cached_and_still_refuses(cache_dir, monkeypatch):
    deep = "{{ " + "(" * (nesting.MAX_DEPTH + 1) + "1" + ")" * (nesting.MAX_DEPTH + 1) + " }}"
    for _ in range(2):
        with pytest.raises(UnsupportedError, match="nests 101 levels"):
            nesting.check_template_depth(deep, "x")
    nesting.check_template_depth("{{ (1) }}", "x")
    entries = sorted((cache_dir / "chat-depth").glob("*.json"))
    assert sorted(json.loads(e.read_text()) for e in entries) == [1, nesting.MAX_DEPTH + 1]
    monkeypatch.setattr(nesting, "template_depth", lambda text: pytest.fail("computed on a warm cache"))
    with pytest.raises(UnsupportedError, match="nests 101 levels"):
        nesting.check_template_depth(deep, "x")
    for e in entries:
        e.write_text('"deep"')  # ill-shaped: recomputed
    monkeypatch.undo()
    monkeypatch.setenv("MTOK_CACHE_DIR", str(cache_dir))
    with pytest.raises(UnsupportedError, match="nests 101 levels"):
        nesting.check_template_depth(deep, "x")


def test_renders_are_cached_and_a_hit_is_what_a_miss_renders(cache_dir, monkeypatch):
    """The lowering's renders of the built-in conversations (BOS placement, header specials)."""
    from mtok_export.chat import render as Rn
    from mtok_export.corpus import builtin_chats

    chats = builtin_chats()
    template = ("{{ bos_token }}{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tools') }}"
                "{% endif %}<{{ m.role }}>{{ m.content }}{{ eos_token }}{% endfor %}")
    expected = []
    for c in chats:
        try:
            expected.append(Rn.render(template, c.messages, bos_token="<s>", eos_token="</s>",
                                      add_generation_prompt=c.add_generation_prompt, tools=c.tools))
        except Rn.TemplateError:
            expected.append(None)
    assert None in expected and any(expected)  # both outcomes are exercised
    assert Rn.renders(template, chats, bos_token="<s>", eos_token="</s>") == expected  # a miss
    (entry,) = sorted((cache_dir / "chat-renders").glob("*.json"))
    monkeypatch.setattr(Rn, "render", lambda *a, **k: pytest.fail("rendered on a warm cache"))
    assert Rn.renders(template, chats, bos_token="<s>", eos_token="</s>") == expected  # a hit
    monkeypatch.undo()
    monkeypatch.setenv("MTOK_CACHE_DIR", str(cache_dir))
    assert Rn.bos_placement(template, "<s>", chats) == "start"  # its own entry (another bos_token)
    monkeypatch.setattr(Rn, "render", lambda *a, **k: pytest.fail("rendered on a warm cache"))
    assert Rn.bos_placement(template, "<s>", chats) == "start"
    monkeypatch.undo()
    monkeypatch.setenv("MTOK_CACHE_DIR", str(cache_dir))
    for bad in ("[", json.dumps(expected[:-1]), json.dumps([1] * len(expected))):
        entry.write_text(bad)
        assert Rn.renders(template, chats, bos_token="<s>", eos_token="</s>") == expected
    assert Rn.renders(template, chats[:2], bos_token="<s>", eos_token="</s>") == expected[:2]  # another key
    assert Rn.renders(template, chats, bos_token="<s>") != expected  # eos is in the key


LLAMA31 = ("{% for message in messages %}{% set content = '<|start_header_id|>' + message['role'] + "
           "'<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
           "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
           "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}")


@pytest.mark.parametrize("cached", [False, True])
def test_an_emptied_bos_field_is_defined_where_an_expression_uses_it(cache_dir, cached):
    """The BOS lowering empties the field (the runtime then leaves bos_token undefined, spec 8.7): a
    template using it in an expression gets it set to '' first, warm cache or not; one that only
    prints it, or a file that keeps the field, is left alone."""
    definition = C.EMPTY_DEFINITION.format("bos_token")
    for _ in range(1 + cached):
        lw = Lowering(TARGETS[DEFAULT], cleared_bos="<|begin_of_text|>")
        out = C.lint_chat_template(lw, LLAMA31)
    assert out == definition + LLAMA31 and lw.chat_original == LLAMA31
    assert any("bos-defined-empty" in d for d in lw.applied["chat template"])
    printed = "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"
    assert C.lint_chat_template(Lowering(TARGETS[DEFAULT], cleared_bos="<s>"), printed) == printed
    assert C.lint_chat_template(Lowering(TARGETS[DEFAULT]), LLAMA31) == LLAMA31


@pytest.mark.runtime
def test_export_of_a_llama31_shaped_folder_renders_its_chats(tmp_path):
    """Issue 31 class 4, a tokenizer of the same shape: a byte-level BPE whose post-processor adds
    BOS (so the field is emptied) and whose template adds BOS in `bos_token + content`: MNN 3.6.1
    rendered `[{"__jinja_undefined__":true},...]`, chats 0/13; now every chat check passes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    from tests.support.commands import run_process

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    specials = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    tok = Tokenizer(models.BPE({c: i for i, c in enumerate(alphabet)}, []))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(specials)
    j = json.loads(tok.to_str())
    bos = {"SpecialToken": {"id": specials[0], "type_id": 0}}
    j["post_processor"] = {"type": "TemplateProcessing", "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, bos,
                                    {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {specials[0]: {"id": specials[0], "ids": [len(alphabet)],
                                                            "tokens": [specials[0]]}}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(j), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": specials[0], "eos_token": "<|eot_id|>", "chat_template": LLAMA31}), encoding="utf-8")
    r = run_process("mtok-export", "--path", str(tmp_path), "--output", str(tmp_path / "out"), "--json")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    report = json.loads(r.stdout)
    checks = {c["name"]: c for c in report["verify"]["checks"]}
    assert all(checks[n]["ok"] == checks[n]["total"] > 0 for n in ("chat text", "chat ids", "chat paths"))
    assert "bos-field-cleared" in json.dumps(report["export"])
    # the HF form gives the field its BOS back, and drops the definition that would empty it again
    from mtok_export.lower.hf_equivalent import hf_equivalent
    from mtok_export.mtok import read_mtok

    embedded = read_mtok((tmp_path / "out" / "tokenizer.mtok").read_bytes())[0]
    assert embedded.chat.text == C.EMPTY_DEFINITION.format("bos_token") + LLAMA31 and embedded.chat.bos_token == ""
    hf = hf_equivalent(embedded).chat
    assert (hf.text, hf.bos_token) == (LLAMA31, specials[0])
