"""The special-token surface of a tokenizer file, for app developers: which special and control
tokens the MNN runtime matches when their text appears inside user text (MNN has no ordinary-text
encode: `tokenizer_encode` always splits them out), which of them end a turn (stop ids), start a
role or call a tool (by their text and the chat template), and whether the source's own library
matches the same text (its reference encode with `add_special_tokens=False`; for HF that is what
transformers does by default, `split_special_tokens=False`).  An app escapes what the runtime
matches, or a user can type a turn end.

Measured, not listed: each token's text is encoded inside ordinary text (`CONTEXT`) on the runtime,
all tokens in one runtime call, and by the source's reference when one is given."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir import models as M
from .reference import ReferenceUnavailable
from .references import choose
from .runtime import run_runtime

CONTEXT = "Hi {} there"  # the token's text between ordinary words, as a user might type it
LIMIT = 1024  # tokens measured at most (reserved ranges are long; the table shows them as counts)
# A token whose text says it ends a turn or the text (`<|im_end|>`, `<|eot_id|>`, `</s>`, `<|endoftext|>`).
TURN_END = re.compile(r"(im_end|eot_id|\beot\b|end_of_turn|endoftext|end_of_text|eom_id|^</s>$|^<eos>$|"
                      r"end\u2581of\u2581sentence|\|end\|)", re.I)
TOOL = re.compile(r"tool|function|call|python|ipython", re.I)
ROLE_WORDS = re.compile(r"role|user|assistant|system|\bbot\b|human|model", re.I)


@dataclass
class Special:
    id: int
    text: str
    special: bool  # an added token marked special (else a plain added token, or a header special)
    runtime: bool  # the runtime splits it out of user text
    source: bool | None  # the source's library does (None: not measured)
    stop: bool  # a stop id: generation ends on it
    role: str  # "turn end", "role", "tool", or "" (by its text and the template)

    def to_json(self) -> dict:
        return {"id": self.id, "text": self.text, "special": self.special, "runtime_matches": self.runtime,
                "source_matches": self.source, "stop": self.stop, "role": self.role}


def candidates(tok) -> list[tuple[int, str, bool]]:
    """(id, text, special) of every added token and header special, by id."""
    names = {i: t for t, i in M.vocab_of(tok.model).items()} if tok.special_ids else {}
    out = {t.id: (t.id, t.content, t.special) for t in tok.added_tokens if t.content}
    for i in tok.special_ids:
        if i not in out and names.get(i):
            out[i] = (i, names[i], True)
    return [out[i] for i in sorted(out)][:LIMIT]


def role_of(text: str, stop: bool, template: str) -> str:
    if stop or TURN_END.search(text):
        return "turn end"
    if TOOL.search(text):
        return "tool"
    at = template.find(text) if template else -1
    while at >= 0:
        if ROLE_WORDS.search(template[at + len(text):at + len(text) + 60]):
            return "role"
        at = template.find(text, at + 1)
    return ""


def texts(found: list[tuple[int, str, bool]]) -> list[str]:
    """What the surface encodes: each of the `candidates` inside ordinary text (`CONTEXT`), in their
    order; verification runs them in its own runtime call (`check.verify`'s `extra`)."""
    return [CONTEXT.format(t) for _, t, _ in found]


def rows(tok, found, got: list[list[int]], ref: list[list[int]] | None, template: str | None = None) -> list[Special]:
    """The surface of the file read as `tok` from its `candidates` (`found`), the runtime's encodes
    `got` of `texts(found)` and the reference's raw ids `ref` of the same texts (None when there is
    none); `template`: the chat template the engine renders (default: the one `tok` embeds)."""
    prefix = len(tok.prefix_ids)
    template = tok.chat.text if template is None else template
    stops = set(tok.stop_ids)
    return [Special(i, t, special, i in got[k][prefix:], (i in ref[k]) if ref is not None else None, i in stops,
                    role_of(t, i in stops, template))
            for k, (i, t, special) in enumerate(found)]


def measure(path, tok, *, template: str | None = None, source=None, python=None) -> list[Special]:
    """The surface of the file at `path` (read as `tok`) on its own: one runtime call for every
    candidate; `source`: the source's IR, whose reference (`verify.references.choose`) is asked the
    same texts (`mtok inspect --specials`, `mtok doctor` without a source)."""
    found = candidates(tok)
    if not found:
        return []
    asked = texts(found)
    got = run_runtime(path, texts=asked, python=python).encodes
    return rows(tok, found, got, _reference(source, asked) if source is not None else None, template)


def _reference(source, texts: list[str]) -> list[list[int]] | None:
    try:
        return choose(source).run(texts, []).raw
    except ReferenceUnavailable:
        return None


def summary(rows: list[Special], shown: int = 12) -> tuple[list[Special], str]:
    """(the rows worth a line: those with a role, a stop, or where the runtime and the source
    disagree, up to `shown`; one line counting the rest)."""
    keep = [r for r in rows if r.role or r.stop or (r.source is not None and r.source != r.runtime)]
    rest = [r for r in rows if r not in keep]
    matched = sum(r.runtime for r in rest)
    line = (f"{len(rest)} other special/added token(s): the runtime matches {matched} of them inside user text"
            if rest else "")
    return keep[:shown], line + (f"; {len(keep) - shown} more in --json" if len(keep) > shown else "")


def short_json(rows: list[Special] | None) -> dict | None:
    """The surface as the manifest keeps it: the rows `summary` shows, and a count of the others."""
    if rows is None:
        return None
    keep = [r for r in rows if r.role or r.stop or (r.source is not None and r.source != r.runtime)]
    rest = [r for r in rows if r not in keep]
    return {"typed_inside": CONTEXT, "tokens": [r.to_json() for r in keep], "others": len(rest),
            "others_runtime_matches": sum(1 for r in rest if r.runtime)}
