"""JSON paths into the IR (`$.pre_tokenizer.pretokenizers[1]`, `$.added_tokens[3].normalized`):
the IR's field names are the HF JSON keys, so the path a loss records in the source JSON also
addresses the IR.  Used to apply a loss's projection patch to the source IR."""

from __future__ import annotations

import re
from dataclasses import replace

REMOVE = object()  # patch value: drop the element from its sequence (or set the field to None)

_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def parse(path: str) -> list[str | int]:
    if not path.startswith("$"):
        raise ValueError(f"not a JSON path: {path!r}")
    steps, pos = [], 1
    while pos < len(path):
        m = _STEP.match(path, pos)
        if m is None:
            raise ValueError(f"bad JSON path {path!r} at {pos}")
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    return steps


def replace_at(obj, path: str, value):
    """A copy of `obj` with the node at `path` replaced by `value` (REMOVE drops it)."""
    return _replace(obj, parse(path), value)


def _replace(obj, steps, value):
    step, rest = steps[0], steps[1:]
    if isinstance(step, int):
        items = list(obj)
        if rest:
            items[step] = _replace(items[step], rest, value)
        elif value is REMOVE:
            del items[step]
        else:
            items[step] = value
        return tuple(items)
    if rest:
        return replace(obj, **{step: _replace(getattr(obj, step), rest, value)})
    return replace(obj, **{step: None if value is REMOVE else value})
