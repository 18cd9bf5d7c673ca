"""Find chat templates in files and directories: `*.jinja`, and the `chat_template` of
`tokenizer_config.json` / `chat_template.json` (a string or a named list).

Each template comes with `at(line, col)`: where a position in the template is in its file.  For a
`.jinja` file they are the same; in a JSON file the template is one string literal, often on a single
line, with `\\n`, `\\"` and `\\uXXXX` escapes, so a finding at template line 12 is somewhere on file
line 3."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError
from ..json_value import parse_json


class Template(NamedTuple):
    label: str  # the file (and `#name` for a named list's entry)
    text: str
    at: Callable[[int, int], tuple[int, int] | None]  # template (line, col) -> file (line, col), both 1-based;
    # None: the same position (a .jinja file)


def _same(line: int, col: int) -> None:
    return None


def templates_in_file(path: Path, label: str | None = None):
    """Yield a `Template` for each template in one file."""
    label = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read as UTF-8 text ({e})") from None
    if path.suffix != ".json":
        yield Template(label, text, _same)
        return
    data = parse_json(text, path)
    template = data.get("chat_template") if isinstance(data, dict) else None
    if isinstance(template, str):
        yield Template(label, template, _file_positions(text, template))
    elif isinstance(template, list):
        for item in template:
            if isinstance(item, dict) and isinstance(item.get("template"), str):
                yield Template(f"{label}#{item.get('name', '?')}", item["template"],
                               _file_positions(text, item["template"]))


def iter_templates(root: Path):
    """Every template in a file or under a directory (sorted by path), as `Template`s."""
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


# ---------------------------------------------------------------- template positions in a JSON file

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _file_positions(raw: str, template: str):
    """`at(line, col)` for `template`, the value of the first string literal in the JSON text `raw`
    that decodes to it (None for every position when none does: a template found another way)."""
    offsets = None
    for m in _JSON_STRING.finditer(raw):
        if m.end() - m.start() >= len(template) + 2 and json.loads(m.group()) == template:
            offsets = _char_offsets(raw, m.start() + 1, m.end() - 1)
            break
    if offsets is None or len(offsets) != len(template) + 1:
        return _same
    starts = [0] + [m.end() for m in re.finditer("\n", template)]

    def at(line: int, col: int) -> tuple[int, int] | None:
        if not 1 <= line <= len(starts):
            return None
        r = offsets[min(starts[line - 1] + col - 1, len(template))]
        return raw.count("\n", 0, r) + 1, r - raw.rfind("\n", 0, r)

    return at


def _char_offsets(raw: str, start: int, end: int) -> list[int]:
    """The offset in `raw` of each character the JSON string body `raw[start:end]` decodes to, and
    `end`: an escape is one character (a `\\uD83D\\uDE00` surrogate pair one as well)."""
    out = []
    i = start
    while i < end:
        out.append(i)
        if raw[i] != "\\":
            i += 1
        elif raw[i + 1] != "u":
            i += 2
        elif 0xD800 <= int(raw[i + 2:i + 6], 16) < 0xDC00 and raw[i + 6:i + 8] == "\\u":
            i += 12
        else:
            i += 6
    out.append(end)
    return out
