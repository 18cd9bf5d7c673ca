"""Find chat templates in files and directories: `*.jinja`, and the `chat_template` of
`tokenizer_config.json` / `chat_template.json` (a string or a named list)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..readers.json_value import parse_json


def templates_in_file(path: Path, label: str | None = None):
    """Yield (label, text) for each template in one file."""
    label = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read as UTF-8 text ({e})") from None
    if path.suffix != ".json":
        yield label, text
        return
    data = parse_json(text, path)
    template = data.get("chat_template") if isinstance(data, dict) else None
    if isinstance(template, str):
        yield label, template
    elif isinstance(template, list):
        for item in template:
            if isinstance(item, dict) and isinstance(item.get("template"), str):
                yield f"{label}#{item.get('name', '?')}", item["template"]


def iter_templates(root: Path):
    """Every template in a file or under a directory (sorted by path)."""
    root = Path(root)
    if root.is_file():
        yield from templates_in_file(root)
        return
    if not root.is_dir():
        raise InputError(f"{root}: no such file or directory")
    for path in sorted(root.rglob("*")):
        if path.is_file() and (path.suffix == ".jinja"
                               or path.name.endswith(("tokenizer_config.json", "chat_template.json"))):
            yield from templates_in_file(path, path.relative_to(root).as_posix())
