"""GPT-2's vocabulary with other split patterns: how the regex lowering tests put a pattern on the
runtime."""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer

from mtok_export.lower import Forms, lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from tests.support.corpus_dirs import CORPUS


# the exact form of a split (uncapped explicit ranges): what these tests compare with Oniguruma; the
# default (bounded) caps it, which only runs longer than the cap show (tests/lower/test_regex_bounded.py)
EXACT = Forms(regex_form="explicit")


def gpt2_with(tmp_path: Path, patterns: list[str], forms: Forms = EXACT, base: str = "gpt2") \
        -> tuple[Tokenizer, Path, object]:
    """GPT-2's vocabulary (or another byte-level corpus tokenizer's, `base`) with `patterns` as
    Split(Isolated) pre-tokenizers before ByteLevel and no normalizer: (HF on that tokenizer.json, the
    `.mtok` lowered in `forms`, by default the exact form, the Lowering)."""
    tj = json.loads((CORPUS / base / "tokenizer.json").read_text(encoding="utf-8"))
    tj["normalizer"] = None  # GPT-2 has none; Qwen2.5's NFC would add its own edge losses
    tj["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False} for p in patterns] + [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    src = tmp_path / "src"
    src.mkdir()
    (src / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    low, lw = lower(read_model_dir(src), TARGETS[DEFAULT], forms=forms)
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    return Tokenizer.from_file(str(src / "tokenizer.json")), path, lw
