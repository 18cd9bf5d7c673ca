"""The HF reference is computed once per content (`verify.reference`): a second run with the same
folder, texts, conversations and template reads the cached result, which equals a fresh one; any
change to what the reference reads is a miss; weights are not hashed; a broken cache file is
recomputed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mtok_export.corpus import builtin_chats
from mtok_export.io import cache_dir
from mtok_export.verify import reference as R

SAMPLE = Path(__file__).resolve().parents[2] / "samples/qwen-bpe"
TEXTS = ["Hello world", "  x\n\ny", "日本語 text", "<|im_start|>user"]


@pytest.fixture
def src(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))
    d = tmp_path / "model"
    shutil.copytree(SAMPLE, d)
    return d


def _fields(ref):
    return ref.engine, ref.raw, ref.decoded, ref.chat_text, ref.chat_ids


def _no_compute(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("the reference was computed again")
    monkeypatch.setattr(R, "run_hf", fail)
    monkeypatch.setattr(R, "_chats", fail)


def test_second_run_reads_what_the_first_computed(src, monkeypatch):
    chats = list(builtin_chats())[:3]
    fresh = R.hf_reference(src, TEXTS, chats)
    _no_compute(monkeypatch)
    cached = R.hf_reference(src, TEXTS, chats)
    assert _fields(cached) == _fields(fresh)
    assert cached.normalize("Hello") == fresh.normalize("Hello")  # loaded on demand


@pytest.mark.parametrize("change", ["config", "texts", "template", "chats"])
def test_any_change_to_what_it_reads_is_a_miss(src, monkeypatch, change):
    chats = list(builtin_chats())[:2]
    R.hf_reference(src, TEXTS, chats)
    texts, template = TEXTS, None
    if change == "config":
        cfg = src / "tokenizer_config.json"
        cfg.write_text(cfg.read_text().replace("}", ', "x_extra": 1}', 1))
    elif change == "texts":
        texts = TEXTS + ["one more"]
    elif change == "template":
        template = "{{ messages[0]['content'] }}"
    else:
        chats = chats[:1]
    calls = []
    real = R.run_hf
    monkeypatch.setattr(R, "run_hf", lambda *a: calls.append(1) or real(*a))
    R.hf_reference(src, texts, chats, template)
    assert calls == [1]


def test_weights_are_not_read(src, monkeypatch):
    (src / "model.safetensors").write_bytes(b"\0" * 1000)
    R.hf_reference(src, TEXTS, [])
    (src / "model.safetensors").write_bytes(b"\1" * 1000)
    _no_compute(monkeypatch)
    R.hf_reference(src, TEXTS, [])


def test_a_broken_cache_file_is_recomputed(src):
    fresh = R.hf_reference(src, TEXTS, [])
    (entry,) = (cache_dir() / "reference").iterdir()
    entry.write_text('{"engine": [')
    again = R.hf_reference(src, TEXTS, [])
    assert _fields(again) == _fields(fresh)
    assert entry.read_text().startswith('{"engine": [[')


def test_chat_path_renders_are_cached(tmp_path, monkeypatch):
    """transformers' chat-path renders are computed once per template and conversations."""
    from mtok_export.ir import ChatTemplate
    from mtok_export.verify import check
    from mtok_export.verify.chat_parity import builtin_conversations

    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    src = ChatTemplate(text="{% for m in messages %}[{{ m.role }}]{% endfor %}{{ bos_token }}", bos_token="<s>")
    convs = list(builtin_conversations())[:4]
    fresh = check._reference_renders(src, convs)
    assert fresh[0] == "".join(f"[{m['role']}]" for m in convs[0].messages) + "<s>"
    monkeypatch.setattr(check, "reference_render", lambda *a, **k: pytest.fail("rendered again"))
    assert check._reference_renders(src, convs) == fresh
    with pytest.raises(pytest.fail.Exception):  # another template is another key
        check._reference_renders(ChatTemplate(text="x", bos_token="<s>"), convs)


def test_bpe_missed_words_are_cached_by_vocabulary_and_merges(tmp_path, monkeypatch):
    import sys

    from mtok_export.ir import models as M
    from mtok_export.lower.models import _words_merges_miss

    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    bpe = M.BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}, (("b", "c"), ("a", "b")))
    assert _words_merges_miss(bpe) == [["abc", ["a", "bc"]]]  # b+c is merged first; (a, bc) is no merge
    monkeypatch.setitem(sys.modules, "tokenizers.models", None)  # a recomputation would fail to import
    assert _words_merges_miss(bpe) == [["abc", ["a", "bc"]]]
    other = M.BPE(bpe.vocab, (("a", "b"), ("b", "c"), ("ab", "c")))
    with pytest.raises(ImportError):  # other merges: another key
        _words_merges_miss(other)
    swapped = M.BPE({**bpe.vocab, "ab": 4, "bc": 3}, bpe.merges)  # the same strings under other ids
    with pytest.raises(ImportError):
        _words_merges_miss(swapped)
    regrouped = M.BPE(bpe.vocab, (("bc", ""), ("ab", "")))  # the same characters, other merges
    with pytest.raises(ImportError):
        _words_merges_miss(regrouped)


def test_strings_blob_tells_apart_the_same_characters_split_differently():
    from mtok_export.cache import strings_blob

    blobs = {strings_blob(s) for s in (["ab", "c"], ["a", "bc"], ["abc"], ["abc", ""], [], [""], ["\x00"])}
    assert len(blobs) == 7
    assert strings_blob(iter(["ab", "c"])) == strings_blob(("ab", "c"))
    assert strings_blob(["\ud800"])  # a lone surrogate (a broken file's token) still hashes
    raw = {strings_blob(s) for s in ([b"ab", b"c"], [b"a", b"bc"], [b"abc"], [b"abc", b""], [b"\x00"])}
    assert len(raw) == 5 and strings_blob([b"ab", b"c"]) == strings_blob(["ab", "c"])  # bytes too: the same form


def test_tiktoken_merges_are_cached_by_the_ranks(tmp_path, monkeypatch):
    from mtok_export import cache
    from mtok_export.readers import tiktoken

    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    ranks = {bytes([b]): b for b in range(256)}
    for t in (b"ab", b"abc", b"bc", b"xyz"):  # abc: a+bc and ab+c; xyz: no two tokens make it
        ranks[t] = len(ranks)
    fresh = tiktoken.ranks_to_bpe(ranks)
    assert fresh[1] == (("a", "b"), ("a", "bc"), ("ab", "c"), ("b", "c")) and fresh[2] == 1  # rank, then left id
    monkeypatch.setattr(tiktoken, "_merge_ranks", lambda *a: pytest.fail("computed again"))
    assert tiktoken.ranks_to_bpe(dict(ranks)) == fresh
    with pytest.raises(pytest.fail.Exception):  # the same bytes under other ranks: another key
        tiktoken.ranks_to_bpe({**ranks, b"ab": ranks[b"bc"], b"bc": ranks[b"ab"]})
    monkeypatch.undo()
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    [entry] = (tmp_path / "tiktoken-merges").iterdir()
    entry.write_text('{"pairs": 3}')  # a broken entry is computed again
    assert tiktoken.ranks_to_bpe(ranks) == fresh
    assert cache.load("tiktoken-merges", entry.stem)["pairs"] == [97, 98, 97, 258, 256, 99, 98, 99]


def test_projection_answers_are_cached_by_the_tokenizer_json_text(tmp_path, monkeypatch):
    """Attribution's HF projections (`verify.projection`): a second attribution of the same source
    builds no tokenizer and explains exactly as the first; a question not asked before builds it
    then; another IR (another text) is another key; a broken entry is recomputed."""
    from dataclasses import replace

    from mtok_export.lower import lower
    from mtok_export.readers.model_dir import read_model_dir
    from mtok_export.targets import DEFAULT, TARGETS
    from mtok_export.verify import projection
    from mtok_export.verify.attribution import Attribution
    from mtok_export.verify.reference_tiktoken import hf_from_ir

    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    src = read_model_dir(SAMPLE)
    low, lw = lower(src, TARGETS[DEFAULT])
    jamo = "\u1112\u1161\u11ab\u1100\u116e\u11a8"  # NFC composes it, the runtime's normalizer does not

    def attribute():
        why = Attribution(src, low, lw, ref_normalize=lambda s: s)
        why.warm()
        want = why.project_raw(jamo, ())
        got = why.project_raw(jamo, why.of("normalizer"))
        out = (want, got, [x.code for x in why.raw(jamo, want, got)], why.raw(jamo, want, got[:-1] + [0]),
               why._readers(jamo), why.base_decode([want, got]))
        why.save()
        return why, out

    built = []
    real = projection.hf_from_json_text
    monkeypatch.setattr(projection, "hf_from_json_text", lambda text: built.append(1) or real(text))
    _, fresh = attribute()
    assert built == [1, 1] and fresh[2] == ["normalizer-approx"] and fresh[0] != fresh[1]
    built.clear()
    why, cached = attribute()
    assert cached == fresh and built == []
    assert why.project_raw("not asked before", ()) == hf_from_ir(src).encode("not asked before",
                                                                             add_special_tokens=False).ids
    assert built == [1]
    built.clear()
    assert projection.Projection(replace(src, decoder=None)).cached is False
    for entry in (tmp_path / "projection").iterdir():
        entry.write_text('{"encode": {')
    _, again = attribute()
    assert again == fresh and built == [1, 1]


def test_a_projection_asked_nothing_is_not_built_ahead_next_time(tmp_path, monkeypatch):
    """A verification without mismatches asks its projections nothing: `save` still records the
    text's (empty) entry, so the next run's `ready` (while the runtime runs) builds no tokenizer; a
    question then builds it and is answered as HF answers it.  (Saving only when something was asked
    built the tokenizer ahead on every run: the first assertion on `built` fails.)"""
    from mtok_export.readers.model_dir import read_model_dir
    from mtok_export.verify import projection
    from mtok_export.verify.reference_tiktoken import hf_from_ir

    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path))
    src = read_model_dir(SAMPLE)
    built = []
    real = projection.hf_from_json_text
    monkeypatch.setattr(projection, "hf_from_json_text", lambda text: built.append(1) or real(text))
    first = projection.Projection(src)
    first.ready()
    first.save()
    assert built == [1]
    built.clear()
    again = projection.Projection(src)
    again.ready()
    assert built == [] and again.cached
    assert again.encode("hello world") == hf_from_ir(src).encode("hello world", add_special_tokens=False).ids
    assert built == [1]
