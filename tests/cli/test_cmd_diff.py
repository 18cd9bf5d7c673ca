"""`mtok diff`: the static per-layer diff and the behavioural diff, checked against what the
inputs independently say (the tokenizer.json files themselves, the sentencepiece library, HF
`tokenizers`, the passes and losses the lowering reports), plus the CLI's exit codes and errors."""

from __future__ import annotations

import json
import shutil

import pytest

from mtok_export.dump import STATIC_LAYERS
from mtok_export.dump.layer_diff import diff_layers, tree_changes
from mtok_export.ir import normalizers as N

from tests.support.corpus_dirs import CORPUS

LLAMA2 = CORPUS / "llama2-7b-hf"
PHI3 = CORPUS / "phi-3-mini-4k-instruct"
SP = CORPUS / "sp-test-models"


def _diff_json(cli, *args) -> tuple[int, dict]:  # noqa: F811
    code, out, err = cli("mtok", "diff", *args, "--json", "--limit", "0")
    assert code in (0, 1), err
    return code, json.loads(out)


def _layers(report) -> dict[str, dict]:
    return {d["layer"]: d for d in report["static"]["layers"]}


def test_tokenizer_against_itself_is_identical(cli):  # noqa: F811
    code, r = _diff_json(cli, LLAMA2, LLAMA2)
    assert code == 0 and r["identical"]
    layers = _layers(r)
    assert list(layers) == list(STATIC_LAYERS)
    for d in layers.values():
        assert d["equal"] and d["hash_a"] == d["hash_b"] and d["changes"] == [], d
    assert r["behaviour"]["compared"] > 400 and r["behaviour"]["differing"] == 0


@pytest.mark.runtime
def test_json_vs_its_mtok_names_the_lowering_changes(cli, lowered_corpus, tmp_path):  # noqa: F811
    from tokenizers import Tokenizer as HF

    ex = lowered_corpus["corpus/qwen2.5-instruct"]
    mtok = tmp_path / "tokenizer.mtok"
    mtok.write_bytes(ex.data)
    code, r = _diff_json(cli, ex.directory, mtok, "--static")
    assert code == 1 and not r["identical"]
    layers = _layers(r)
    changed = {k for k, d in layers.items() if not d["equal"]}
    # the passes lowering reports, each visible in its own layer
    assert set(ex.lowering.applied) == {"unicode-replaces", "added-tokens-in-vocab", "header-specials", "chat template"}
    assert {"normalizer", "vocab", "chat_template"} <= changed  # the template is lowered for MNN's engine
    # NFC as the guarded table (its 1,120 code-point rules, 182 guards around it) and the 940 pairs
    assert layers["normalizer"]["changes"] == [{"op": "~", "where": "$.normalizer", "a": "NFC",
                                               "b": "Sequence[182 x Replace, MnnCodepointMap(1120 entries), "
                                                    "940 x Replace]"}]
    # the Replaces lowering wrote map every code point as NFC does: the tables layer is equal
    assert layers["tables"]["equal"]
    # added tokens join the vocab: exactly the ones HF keeps outside the model vocab, with their ids
    hf = HF.from_file(str(ex.directory / "tokenizer.json"))
    model_vocab = hf.get_vocab(with_added_tokens=False)
    outside = {t: i for t, i in hf.get_vocab(with_added_tokens=True).items() if t not in model_vocab}
    assert layers["vocab"]["counts"] == {"added": len(outside), "removed": 0, "re-numbered": 0}
    assert {c["where"]: int(c["b"]) for c in layers["vocab"]["changes"]} == outside
    # what the export keeps as is
    for name in ("merges", "added_tokens"):
        assert layers[name]["equal"], name
    # the header list keeps the template's turn mark only (`lower.models.header_specials`)
    turn = {t.id: t.content for t in ex.lowered.added_tokens}[ex.lowered.special_ids[0]]
    assert len(ex.lowered.special_ids) == 1 and turn in ("<|im_start|>", "<|im_end|>")
    assert not layers["specials"]["equal"]
    # the ByteLevel post-processor adds no ids: lowering drops it
    assert layers["post_processor"]["changes"][0]["b"] == "none"


@pytest.mark.runtime
def test_json_vs_its_mtok_behaviour_only_where_lowering_declared_a_loss(cli, lowered_corpus, tmp_path):  # noqa: F811
    ex = lowered_corpus["corpus/qwen2.5-instruct"]
    mtok = tmp_path / "tokenizer.mtok"
    mtok.write_bytes(ex.data)
    code, r = _diff_json(cli, ex.directory, mtok, "--layer", "normalized")
    assert "static" not in r
    beh = r["behaviour"]
    # the NFC lowering declares that Hangul jamo do not compose: those strings differ when normalized
    example = next(loss.example for loss in ex.lowering.losses if loss.code == "normalizer-approx")
    assert example == "\u1100\u1161"
    assert beh["differing"] > 0 and code == 1
    assert "ko-jamo-word" in {d["sample"] for d in beh["diffs"]}
    for d in beh["diffs"]:
        assert d["layer"] == "normalized"
        import unicodedata
        assert d["a"] == unicodedata.normalize("NFC", d["text"])


def test_llama2_vs_phi3_added_tokens(cli):  # noqa: F811
    code, r = _diff_json(cli, LLAMA2, PHI3, "--static")
    assert code == 1
    layers = _layers(r)
    ja = json.loads((LLAMA2 / "tokenizer.json").read_bytes())
    jb = json.loads((PHI3 / "tokenizer.json").read_bytes())
    added_a = {t["content"]: t for t in ja["added_tokens"]}
    added_b = {t["content"]: t for t in jb["added_tokens"]}
    ch = layers["added_tokens"]["changes"]
    assert sorted(c["where"] for c in ch if c["op"] == "+") == sorted(added_b.keys() - added_a.keys())
    assert [c["where"] for c in ch if c["op"] == "-"] == []
    changed = sorted(c for c in added_a.keys() & added_b.keys() if added_a[c] != added_b[c])
    assert sorted(c["where"] for c in ch if c["op"] == "~") == changed
    assert layers["vocab"]["equal"] == (ja["model"]["vocab"] == jb["model"]["vocab"])
    assert layers["merges"]["equal"] == (ja["model"]["merges"] == jb["model"]["merges"])
    assert layers["normalizer"]["equal"] == (ja["normalizer"] == jb["normalizer"])
    assert layers["decoder"]["equal"] == (ja["decoder"] == jb["decoder"])
    assert not layers["chat_template"]["equal"]  # Phi-3 ships a template, Llama-2's config none


@pytest.mark.runtime
def test_two_sentencepiece_models(cli):  # noqa: F811
    import sentencepiece as spm

    a, b = SP / "test_model.model", SP / "test_ja_model.model"
    code, r = _diff_json(cli, a, b, "--static")
    assert code == 1
    sa, sb = (spm.SentencePieceProcessor(model_file=str(p)) for p in (a, b))
    pa = {sa.id_to_piece(i): i for i in range(sa.get_piece_size())}
    pb = {sb.id_to_piece(i): i for i in range(sb.get_piece_size())}
    vocab = _layers(r)["vocab"]
    assert vocab["counts"] == {"added": len(pb.keys() - pa.keys()), "removed": len(pa.keys() - pb.keys()),
                               "re-numbered": sum(1 for p in pa.keys() & pb.keys() if pa[p] != pb[p])}
    scores = _layers(r)["scores"]
    beyond = {p for p in pa.keys() & pb.keys() if abs(sa.get_score(pa[p]) - sb.get_score(pb[p])) > 1e-6}
    assert {c["where"] for c in scores["changes"]} == beyond
    # both models normalize with the same nmt-less NFKC charsmap
    assert _layers(r)["normalizer"]["equal"] and _layers(r)["tables"]["equal"]


@pytest.fixture
def fine_tune(tmp_path):
    """Llama-2's tokenizer with two tokens a fine-tune added (one special) and a chat template."""
    d = tmp_path / "ft"
    d.mkdir()
    data = json.loads((LLAMA2 / "tokenizer.json").read_bytes())
    data["added_tokens"] += [
        {"id": 32000, "content": "<|tool|>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False},
        {"id": 32001, "content": "<|think|>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}]
    (d / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    config = json.loads((LLAMA2 / "tokenizer_config.json").read_bytes())
    config["chat_template"] = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    shutil.copy(LLAMA2 / "special_tokens_map.json", d)
    return d


def test_fine_tune_that_adds_tokens(cli, fine_tune, tmp_path):  # noqa: F811
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('"plain text"\n"a <|think|> b"\n', encoding="utf-8")
    code, r = _diff_json(cli, LLAMA2, fine_tune, "--corpus", corpus)
    assert code == 1
    layers = _layers(r)
    assert {k for k, d in layers.items() if not d["equal"]} == {"added_tokens", "specials", "chat_template"}
    assert layers["added_tokens"]["changes"] == [
        {"op": "+", "where": "<|tool|>", "a": "", "b": "id 32000 normalized=False"},
        {"op": "+", "where": "<|think|>", "a": "", "b": "id 32001 normalized=False special"}]
    assert {"op": "+", "where": "special <|think|>(32001)", "a": "", "b": ""} in layers["specials"]["changes"]
    beh = r["behaviour"]
    assert beh["compared"] == 2 and beh["differing"] == 1
    (d,) = beh["diffs"]
    assert d["sample"] == "user-2" and d["layer"] == "ids"
    assert [32001, "<|think|>"] in d["b"] and [32001, "<|think|>"] not in d["a"]


def test_layer_option_focuses_and_decides_the_exit_code(cli, fine_tune):  # noqa: F811
    code, r = _diff_json(cli, LLAMA2, fine_tune, "--layer", "vocab")
    assert code == 0 and [d["layer"] for d in r["static"]["layers"]] == ["vocab"] and "behaviour" not in r
    code, r = _diff_json(cli, LLAMA2, fine_tune, "--layer", "added_tokens")
    assert code == 1


def test_text_output_fits_and_limits(cli, fine_tune):  # noqa: F811
    code, out, _ = cli("mtok", "diff", LLAMA2, PHI3, "--static", "--limit", "2")
    assert code == 1
    assert "added_tokens" in out and "… 12 more" in out  # 11 added and 3 changed tokens, 2 shown
    assert max(len(line) for line in out.splitlines()) <= 160


def test_sequence_children_aligned_by_content():
    a = N.Sequence((N.NFC(), N.Lowercase()))
    b = N.Sequence((N.NFC(), N.Strip(), N.Lowercase()))
    (c,) = tree_changes(a, b, "$.normalizer")
    assert (c.op, c.where) == ("+", "$.normalizer.normalizers[1]")


def test_static_diff_of_ir_pair_in_process():
    from mtok_export.formats import read_source

    tok = read_source(LLAMA2)
    assert all(d.equal for d in diff_layers(tok, tok))


# ---------------------------------------------------------------- errors: one line, exit 2

@pytest.mark.parametrize("args, message", [
    (["missing-dir", str(LLAMA2)], "missing-dir: no such file or directory"),
    ([str(LLAMA2), str(LLAMA2), "--layer", "vocabulary"], "--layer 'vocabulary': choose one of"),
    ([str(LLAMA2), str(LLAMA2), "--limit", "-1"], "--limit must be 0 (all) or more"),
])
def test_cli_errors(cli, args, message):  # noqa: F811
    code, out, err = cli("mtok", "diff", *args)
    assert code == 2 and out == ""
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_cli_bad_corpus(cli, tmp_path):  # noqa: F811
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n{"text": 3}\n', encoding="utf-8")
    code, _, err = cli("mtok", "diff", LLAMA2, LLAMA2, "--corpus", bad)
    assert code == 2 and f"{bad}:2:" in err and '"text" must be a string' in err


@pytest.mark.runtime
def test_runtime_ids_differ_only_where_lowering_declared_a_loss(cli, lowered_corpus, tmp_path):  # noqa: F811
    ex = lowered_corpus["corpus/llama2-7b-hf"]
    mtok = tmp_path / "tokenizer.mtok"
    mtok.write_bytes(ex.data)
    code, r = _diff_json(cli, ex.directory, mtok, "--runtime", "--layer", "ids")
    beh = r["behaviour"]
    assert beh["engine_b"].startswith("MNN ") and beh["skipped"] == 1  # the sample with a NUL
    triggers = [t for loss in ex.lowering.losses if loss.code == "added-normalized" for t in
                ([loss.trigger] if isinstance(loss.trigger, str) else loss.trigger)]
    assert triggers and code == 1
    for d in beh["diffs"]:
        assert any(t in d["text"] for t in triggers), d["text"]


def test_tables_layer_lists_the_code_points_two_forms_map_differently():
    import unicodedata

    from mtok_export.ir import Tokenizer
    from mtok_export.ir import models as M

    import unicodedataplus

    model = M.BPE({"a": 0})
    (d,) = diff_layers(Tokenizer(model, normalizer=N.NFC()), Tokenizer(model, normalizer=N.NFKC()), only="tables")

    def by_9(c: str) -> bool:  # the tables follow HF tokenizers' Unicode 9.0; later characters map to themselves
        age = unicodedataplus.age(c)
        return age != "Unassigned" and tuple(map(int, age.split("."))) <= (9, 0)

    expected = {cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and by_9(chr(cp))
                and unicodedata.normalize("NFC", chr(cp)) != unicodedata.normalize("NFKC", chr(cp))}
    assert {int(c.where.split()[0][2:], 16) for c in d.changes} == expected
    fi = next(c for c in d.changes if c.where.startswith("U+FB01"))  # the "fi" ligature: NFKC only
    assert (fi.op, fi.a, fi.b) == ("+", "", "fi")
