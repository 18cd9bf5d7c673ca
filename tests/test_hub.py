"""HuggingFace Hub repositories as `--path org/name[@revision]` (issue 24), offline: each test builds a
Hub cache folder in the layout huggingface_hub reads (`models--org--name/snapshots/<sha>/...`,
`refs/<branch>`) and runs with HF_HUB_OFFLINE=1."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub.utils import filter_repo_objects

from mtok_export.hub import TOKENIZER_FILES, parse_repo_id

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
SHA1, SHA2 = "1" * 40, "2" * 40


def run(prog: str, *args, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    code = {"mtok-export": "from mtok_export.cli import export_main as m",
            "mtok": "from mtok_export.cli import main as m"}[prog]
    return subprocess.run([sys.executable, "-c", f"import sys; {code}; sys.argv[0] = {prog!r}; m()", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=600,
                          env={**env, "PYTHONPATH": str(REPO)})


def add_snapshot(cache: Path, repo: str, sha: str, files: dict[str, Path | str], refs=("main",)) -> Path:
    """One commit of `repo` in the cache: its files (copied, or text) and the refs pointing at it."""
    root = cache / ("models--" + repo.replace("/", "--"))
    snap = root / "snapshots" / sha
    snap.mkdir(parents=True)
    for name, src in files.items():
        (snap / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(src, Path):
            shutil.copyfile(src, snap / name)
        else:
            (snap / name).write_text(src)
    (root / "refs").mkdir(exist_ok=True)
    for ref in refs:
        (root / "refs" / ref).write_text(sha)
    return snap


@pytest.fixture
def hub(tmp_path) -> tuple[Path, dict]:
    """(the cache folder, the environment): acme/qwen at SHA1 (qwen-bpe, tag v1) and SHA2 (bert-wordpiece,
    main)."""
    cache = tmp_path / "hub"
    add_snapshot(cache, "acme/qwen", SHA1, {n: SAMPLES / "qwen-bpe" / n for n in
                                             ("tokenizer.json", "tokenizer_config.json", "config.json")}, refs=("v1",))
    add_snapshot(cache, "acme/qwen", SHA2, {n: SAMPLES / "bert-wordpiece" / n for n in
                                             ("tokenizer.json", "tokenizer_config.json", "vocab.txt")})
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    return cache, {**env, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------ what is fetched

WEIGHTS_AND_OTHERS = ["model.safetensors", "model-00001-of-00004.safetensors", "model.safetensors.index.json",
                      "pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "onnx/model.onnx", "README.md",
                      ".gitattributes", "LICENSE", "modeling_qwen.py", "model.gguf", "consolidated.00.pth",
                      "params.json", "sub/tokenizer.json"]


@pytest.mark.parametrize("repo_files,fetched", [
    # a tokenizer.json repo (Qwen2.5-like), with its chat template beside the configs
    (["tokenizer.json", "tokenizer_config.json", "config.json", "generation_config.json", "vocab.json",
      "merges.txt", "chat_template.jinja", "special_tokens_map.json", "added_tokens.json"], None),
    # a SentencePiece repo (Llama-2 / T5 / Mistral-like)
    (["tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model.v3", "tokenizer_config.json",
      "special_tokens_map.json", "chat_template.json", "tokenization_llama.py"], None),
    # a tiktoken repo (Qwen-7B / Llama-3 original / Mistral tekken-like), its remote code read statically
    (["qwen.tiktoken", "tiktoken.model", "original/tokenizer.model", "tekken.json", "tokenization_qwen.py",
      "tokenizer_config.json", "generation_config.json"], None),
])
def test_only_the_tokenizer_files_are_fetched(repo_files, fetched):
    # filter_repo_objects is what snapshot_download applies allow_patterns with
    got = set(filter_repo_objects(repo_files + WEIGHTS_AND_OTHERS, allow_patterns=list(TOKENIZER_FILES)))
    assert got == set(repo_files)


def test_fetch_asks_for_those_patterns(monkeypatch, tmp_path):
    import huggingface_hub

    from mtok_export import hub

    asked = {}
    snap = tmp_path / "snapshots" / SHA1
    snap.mkdir(parents=True)

    def fake(repo_id, **kwargs):
        asked.update(kwargs, repo_id=repo_id)
        return str(snap)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    got = hub.fetch("acme/qwen", "v1")
    assert asked == {"repo_id": "acme/qwen", "revision": "v1", "allow_patterns": list(TOKENIZER_FILES)}
    assert (got.sha, got.path, got.to_json()) == (SHA1, snap, {"repo_id": "acme/qwen", "revision": "v1", "sha": SHA1})


@pytest.mark.parametrize("text,parsed", [
    ("acme/qwen", ("acme/qwen", None)), ("Qwen/Qwen2.5-0.5B-Instruct@main", ("Qwen/Qwen2.5-0.5B-Instruct", "main")),
    (f"acme/qwen@{SHA1}", ("acme/qwen", SHA1)), ("acme/qwen@refs/pr/3", ("acme/qwen", "refs/pr/3")),
    ("qwen", None), ("a/b/c", None), ("/abs/path", None), ("../models", None), ("acme/..", None), ("acme/q@", None),
    ("@models.txt", None),
])
def test_parse_repo_id(text, parsed):
    assert parse_repo_id(text) == parsed


# ------------------------------------------------------------------ export and verify from the cache

@pytest.mark.runtime
def test_export_from_the_cache_records_the_commit_and_verify_rechecks_it(hub, tmp_path):
    cache, env = hub
    work = tmp_path / "work"
    work.mkdir()
    r = run("mtok-export", "--path", "acme/qwen@v1", "--json", env=env, cwd=work)
    assert r.returncode == 0, r.stderr
    out = work / "qwen" / "tokenizer.mtok"  # a Hub model without --output: ./NAME, not the cache
    assert json.loads(r.stdout)["export"]["output"] == str(out)
    manifest = json.loads((work / "qwen" / "tokenizer.mtok.json").read_text())
    assert manifest["hub"] == {"repo_id": "acme/qwen", "revision": "v1", "sha": SHA1}
    snap1 = cache / "models--acme--qwen" / "snapshots" / SHA1
    assert {i["sha256"] for i in manifest["inputs"]} >= {sha256(snap1 / "tokenizer.json")}
    assert not list(cache.rglob("*.mtok"))  # nothing written into the cache
    # the cache moves (another machine, another HF_HUB_CACHE) and main moves on: verify reads SHA1 again
    moved = tmp_path / "moved-hub"
    shutil.move(cache, moved)
    (moved / "models--acme--qwen" / "refs" / "v1").write_text(SHA2)  # even the tag moved
    v = run("mtok", "verify", out, "--json", env={**env, "HF_HUB_CACHE": str(moved)}, cwd=work)
    assert v.returncode == 0, v.stderr + v.stdout
    assert json.loads(v.stdout)["verify"]["ok"] is True
    # without that commit in the cache (and offline), verify says so: exit 2, no traceback
    shutil.rmtree(moved / "models--acme--qwen" / "snapshots" / SHA1)
    gone = run("mtok", "verify", out, env={**env, "HF_HUB_CACHE": str(moved)}, cwd=work)
    assert gone.returncode == 2 and "Traceback" not in gone.stderr
    assert gone.stderr.startswith(f"error: acme/qwen@{SHA1}: not in the Hub cache (revision '{SHA1}') and "
                                  "HF_HUB_OFFLINE is set"), gone.stderr


@pytest.mark.runtime
@pytest.mark.parametrize("spec,sample", [("acme/qwen", "bert-wordpiece"), ("acme/qwen@main", "bert-wordpiece"),
                                         ("acme/qwen@v1", "qwen-bpe"), (f"acme/qwen@{SHA1}", "qwen-bpe")])
def test_a_revision_pins_the_files_read(hub, tmp_path, spec, sample):
    cache, env = hub
    r = run("mtok-export", "--path", spec, "--output", tmp_path / "out", "--no-verify", "--allow-lossy", env=env,
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "out" / "tokenizer.mtok.json").read_text())
    assert manifest["hub"]["sha"] == (SHA1 if sample == "qwen-bpe" else SHA2)
    read = [i["sha256"] for i in manifest["inputs"] if i["path"].endswith("tokenizer.json")]
    assert read == [sha256(SAMPLES / sample / "tokenizer.json")]


@pytest.mark.runtime
def test_sentencepiece_and_tiktoken_repos_from_the_cache(tmp_path):
    cache = tmp_path / "hub"
    add_snapshot(cache, "acme/llama", SHA1, {"tokenizer.model": SAMPLES / "llama-spm" / "tokenizer.model",
                                             "tokenizer_config.json": SAMPLES / "llama-spm" / "tokenizer_config.json"})
    qwen = REPO.parent / "shared" / "corpus" / "tokenizers" / "qwen-7b_tiktoken" / "qwen.tiktoken"
    add_snapshot(cache, "acme/qwen-tiktoken", SHA2, {"qwen.tiktoken": qwen})
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("HF_")}, "HF_HUB_CACHE": str(cache),
           "HF_HUB_OFFLINE": "1"}
    r = run("mtok-export", "--path", "acme/llama", "acme/qwen-tiktoken", "--output", tmp_path / "out", "--no-verify",
            "--allow-lossy", "--json", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    models = {m["name"]: m for m in json.loads(r.stdout)["models"]}
    assert models["llama"]["source"] == "acme/llama" and models["qwen-tiktoken"]["exit_code"] == 0
    for name, sha in (("llama", SHA1), ("qwen-tiktoken", SHA2)):
        manifest = json.loads((tmp_path / "out" / name / "tokenizer.mtok.json").read_text())
        assert manifest["hub"]["sha"] == sha


@pytest.mark.runtime
@pytest.mark.parametrize("spec,message", [
    ("nobody/nothing", "nobody/nothing: not in the Hub cache (its default branch) and HF_HUB_OFFLINE is set"),
    ("acme/qwen@v9", "acme/qwen@v9: not in the Hub cache (revision 'v9') and HF_HUB_OFFLINE is set"),
    (f"acme/qwen@{'3' * 40}", f"acme/qwen@{'3' * 40}: not in the Hub cache (revision '{'3' * 40}')"),
])
def test_a_missing_repo_or_revision_is_exit_2(hub, tmp_path, spec, message):
    _, env = hub
    r = run("mtok-export", "--path", spec, "--no-verify", "--report", tmp_path / "r.json", env=env, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"error: {message}"), r.stderr
    assert "Traceback" not in r.stderr
    assert json.loads((tmp_path / "r.json").read_text())["exit_code"] == 2


@pytest.mark.runtime
def test_a_missing_repo_among_several_is_that_models_row(hub, tmp_path):
    _, env = hub
    r = run("mtok-export", "--path", "nobody/nothing", "acme/qwen", "--output", tmp_path / "out", "--no-verify",
            "--allow-lossy", "--json", env=env, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    rows = {m["name"]: m["exit_code"] for m in json.loads(r.stdout)["models"]}
    assert rows == {"nothing": 2, "qwen": 0}
    assert (tmp_path / "out" / "qwen" / "tokenizer.mtok").is_file()


@pytest.mark.runtime
def test_a_local_path_wins(hub, tmp_path):
    _, env = hub
    shutil.copytree(SAMPLES / "t5-unigram", tmp_path / "acme" / "qwen")
    r = run("mtok-export", "--path", "acme/qwen", "--no-verify", "--allow-lossy", env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((tmp_path / "acme" / "qwen" / "tokenizer.mtok.json").read_text())
    assert manifest["hub"] is None and manifest["source"] == str(tmp_path / "acme" / "qwen")


@pytest.mark.runtime
def test_the_api_reads_a_hub_repository(hub, tmp_path):
    _, env = hub
    code = ("import json, sys; from mtok_export import export; from mtok_export.errors import InputError\n"
            "r = export('acme/qwen@v1', sys.argv[1], verify_on_runtime=False, allow_lossy=True)\n"
            "print(json.dumps([str(r.path), r.manifest['hub']]))\n"
            "try:\n    export('acme/qwen', allow_lossy=True)\n"
            "except InputError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code, tmp_path / "out"], capture_output=True, text=True, cwd=tmp_path,
                       env={**env, "PYTHONPATH": str(REPO)}, timeout=300)
    assert r.returncode == 0, r.stderr
    written, refused = r.stdout.splitlines()
    assert json.loads(written) == [str(tmp_path / "out" / "tokenizer.mtok"),
                                   {"repo_id": "acme/qwen", "revision": "v1", "sha": SHA1}]
    assert refused == "acme/qwen: a Hub repository needs output_dir (its cache folder is no place for the output)"
