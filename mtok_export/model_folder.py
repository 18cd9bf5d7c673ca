"""MNN model folders (spec 2.8, 11): the folder an app loads holds `config.json` (`tokenizer_file`,
`llm_model`, `llm_weight`) and often `llm_config.json`, whose keys override `config.json`'s.  Its
`jinja` block (`chat_template`, `eos`, `context`; `bos` is written by MNN's exporter but never read)
replaces the template and EOS embedded in the tokenizer file.  File names are resolved relative to
the folder of `config.json`; an absolute `tokenizer_file` is not found.

This module finds out what the engine will use in such a folder, and rewrites `llm_config.json`'s
`jinja` block so it says what the exported file embeds (every other key, and the key order, kept)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .json_value import parse_json

DEFAULT_TOKENIZER_FILE = "tokenizer.txt"  # MNN's config getter default (llmconfig.hpp)
MODEL_KEYS = ("tokenizer_file", "llm_model", "llm_weight")


@dataclass
class ModelFolder:
    dir: Path
    config: dict | None  # config.json
    llm_config: dict | None  # llm_config.json
    llm_config_text: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def merged(self) -> dict:
        """What the engine reads: llm_config.json's keys over config.json's."""
        return {**(self.config or {}), **(self.llm_config or {})}

    @property
    def tokenizer_file(self) -> str:
        return str(self.merged.get("tokenizer_file") or DEFAULT_TOKENIZER_FILE)

    @property
    def tokenizer_path(self) -> Path:
        return self.dir / self.tokenizer_file

    @property
    def jinja(self) -> dict | None:
        return jinja_block(self.llm_config)

    def engine_llm_config(self) -> dict | None:
        """The llm_config the runtime is given in verification: the folder's own, as the engine sees it."""
        return dict(self.llm_config) if self.llm_config is not None else None


def jinja_block(llm_config: dict | None) -> dict | None:
    """The `jinja` block of an llm_config the engine honours (only when it has a `chat_template`)."""
    block = (llm_config or {}).get("jinja")
    return block if isinstance(block, dict) and isinstance(block.get("chat_template"), str) else None


def _load(path: Path) -> tuple[dict | None, str]:
    if not path.is_file():
        return None, ""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read as UTF-8 JSON ({e.__class__.__name__}: {e}); MNN would fail to "
                         "read it") from e
    data = parse_json(text, path)  # also refuses duplicate keys: MNN's rapidjson takes the first, Python the last
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object")
    return data, text


def find(directory: Path) -> ModelFolder | None:
    """The MNN model folder at `directory`, or None when it holds neither config.json with model keys
    nor llm_config.json."""
    directory = Path(directory)
    config, _ = _load(directory / "config.json")
    llm_config, text = _load(directory / "llm_config.json")
    if config is not None and not any(k in config for k in MODEL_KEYS):
        config = None  # a HuggingFace config.json, not MNN's
    if config is None and llm_config is None:
        return None
    return ModelFolder(directory, config, llm_config, text)


def check_tokenizer_file(folder: ModelFolder, written: Path) -> list[str]:
    """Warnings when the engine would not load the file just written."""
    name = folder.tokenizer_file
    out = []
    if Path(name).is_absolute():
        out.append(f"{folder.dir}: tokenizer_file {name!r} is absolute; MNN resolves it relative to the folder of "
                   f"config.json and will not find it: write {written.name!r}")
    elif (folder.dir / name).resolve() != Path(written).resolve():
        out.append(f"{folder.dir}: the engine loads tokenizer_file {name!r}, not the file written ({written.name}); "
                   f"set tokenizer_file to {written.name!r}")
    return out


def with_jinja(folder: ModelFolder, chat_template: str, bos: str, eos: str) -> tuple[str, dict | None]:
    """llm_config.json's text with its `jinja` block set to what the tokenizer file embeds (other keys
    and the key order kept; a `context` kept), and the previous block."""
    data = dict(folder.llm_config or {})
    previous = data.get("jinja") if isinstance(data.get("jinja"), dict) else None
    block = dict(previous or {})
    block.update({"chat_template": chat_template, "bos": bos, "eos": eos})
    data["jinja"] = block
    indent = _indent(folder.llm_config_text)
    return json.dumps(data, ensure_ascii=False, indent=indent) + "\n", previous


def _indent(text: str) -> int | None:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) < len(line):
            return len(line) - len(stripped)
    return None if text.strip() else 4


def describe(folder: ModelFolder) -> dict:
    """What the engine will use in this folder, and why (for `mtok inspect MODEL_DIR`)."""
    merged = folder.merged
    source = ("llm_config.json" if "tokenizer_file" in (folder.llm_config or {}) else
              "config.json" if "tokenizer_file" in (folder.config or {}) else "MNN's default")
    jinja = folder.jinja
    return {
        "folder": str(folder.dir),
        "tokenizer_file": folder.tokenizer_file, "tokenizer_file_from": source,
        "tokenizer_found": folder.tokenizer_path.is_file(),
        "template_from": "llm_config.json jinja.chat_template" if jinja else "the tokenizer file",
        "eos_from": "llm_config.json jinja.eos" if jinja else "the tokenizer file",
        "jinja": jinja, "context": (jinja or {}).get("context"),
        "llm_model": merged.get("llm_model"), "llm_weight": merged.get("llm_weight"),
    }
