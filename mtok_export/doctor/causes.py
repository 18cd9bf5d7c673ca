"""What a layer difference between a deployed file and the file this tool would write means, in
words a person can act on ("the normalizer drops NFC: decomposed input tokenizes differently"),
and which static layers each pipeline component a runtime mismatch points at lives in."""

from __future__ import annotations

from ..dump.render import one_line
from ..dump.sanitize import clip, show
from ..ir import normalizers as N
from ..ir.walk import walk
from ..verify.emulate import normalize_around

# The static layers (`dump.STATIC_LAYERS`) behind each component an unexplained runtime mismatch
# points at (`verify.attribution.COMPONENTS`): a difference there is the likely cause of it.
COMPONENT_LAYERS = {
    "normalizer": ("normalizer", "tables"),
    "split": ("pre_tokenizer",),
    "model": ("model", "merges", "scores", "vocab"),
    "vocabulary": ("vocab", "merges"),
    "added tokens": ("added_tokens", "specials"),
    "bos/eos": ("specials", "post_processor"),
    "template": ("chat_template",),
    "decoder": ("decoder", "vocab", "added_tokens"),  # an id the file lacks decodes to nothing
    "reader": (),
    "interpretation": (),
}

# Said when a component differs on the runtime but no static layer does (the file's own bytes read
# the same as ours there): what that component does, so the line still names a cause.
COMPONENT_WORDS = {
    "normalizer": "the runtime normalizes the text differently from the source",
    "split": "the runtime splits the text into words differently from the source (its regex engine)",
    "model": "the model part (vocabulary, merges or scores) gives other ids",
    "vocabulary": "ids outside the written vocabulary",
    "added tokens": "special or added tokens are matched differently inside the text",
    "bos/eos": "the ids put before or after the text, or the stop ids, differ",
    "template": "the chat prompt renders differently from the source's template",
    "decoder": "ids decode to other text",
    "reader": "this tool's reading of the source differs from the source's own library",
    "interpretation": "the source folder's files disagree with each other",
}

_FORMS = {N.NFC: "NFC", N.NFD: "NFD", N.NFKC: "NFKC", N.NFKD: "NFKD", N.Precompiled: "a precompiled charsmap",
          N.Nmt: "NMT normalization", N.Lowercase: "lowercasing", N.StripAccents: "accent stripping",
          N.BertNormalizer: "BERT normalization"}
_COMPOSING = {"NFC", "NFKC", "a precompiled charsmap"}


def forms(normalizer) -> list[str]:
    """The normalization steps a normalizer tree takes, in order, by name."""
    return [_FORMS[type(n)] for n in walk(normalizer) if type(n) in _FORMS]


# Probes of what a normalizer does, each with the words for a file that does not do it: NFC
# composition, compatibility folding, and the other way round.
_PROBES = (("e\u0301", "drops NFC: decomposed input (e + U+0301) no longer composes and tokenizes differently"),
           ("\ufb01", "drops compatibility folding (NFKC): ligatures and full-width forms reach the model unfolded"),
           ("\u00e9", "decomposes composed text the source keeps whole"))


def normalize(tok, text: str) -> str:
    """`text` as the runtime normalizes it with `tok`'s normalizer (the added tokens left as they are)."""
    return normalize_around(tok.normalizer, text, tuple(t.content for t in tok.added_tokens))


def normalizer_cause(have, want, texts=()) -> str:
    """The normalizer's difference, measured: the probes it fails, then the first code point of the
    first input where the file and the source normalize differently."""
    parts = [words for probe, words in _PROBES if normalize(have, probe) != normalize(want, probe)]
    for text in texts:
        a, b = normalize(have, text), normalize(want, text)
        if a != b:
            i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            at = f"U+{ord(b[i]):04X}" if i < len(b) else "the end"
            parts.append(f"at {at} the file gives '{show(a[max(0, i - 3):i + 4])}' where the source gives "
                         f"'{show(b[max(0, i - 3):i + 4])}'")
            break
    if not parts:
        return _normalizer(None, have, want)
    return "the normalizer " + ("" if parts[0].startswith(("drops", "decomposes")) else "differs: ") + "; ".join(parts)


def layer_cause(d, have, want) -> str:
    """One sentence for a differing layer `d` (`dump.layer_diff.LayerDiff` of the file `have` against
    the file the source gives, `want`)."""
    return clip(_CAUSE.get(d.name, _generic)(d, have, want), 300)


def _generic(d, have, want) -> str:
    counts = ", ".join(f"{n:,} {k}" for k, n in d.counts.items() if n)
    return f"the {d.name.replace('_', ' ')} differs ({counts or d.note})"


def _normalizer(d, have, want) -> str:
    probed = [words for probe, words in _PROBES if normalize(have, probe) != normalize(want, probe)]
    if probed:
        return "the normalizer " + "; ".join(probed)
    fa, fb = forms(have.normalizer), forms(want.normalizer)
    lost = [f for f in fb if f not in fa]
    mapped = any(isinstance(n, N.CodepointMap) for n in walk(have.normalizer))
    if lost:
        what = " and ".join(lost)
        instead = " (a code-point map in its place)" if mapped else ""
        effect = ("decomposed input (e + U+0301) no longer composes and tokenizes differently"
                  if _COMPOSING & set(lost) else "text it would change reaches the model unchanged")
        return f"the normalizer drops {what}{instead}: {effect}"
    extra = [f for f in fa if f not in fb]
    if extra:
        return f"the normalizer adds {' and '.join(extra)} the source does not do: such text tokenizes differently"
    return f"the normalizer differs: the file has {_one(have.normalizer)}, the source gives {_one(want.normalizer)}"


def _tables(d, have, want) -> str:
    return (f"the normalization table differs on {sum(d.counts.values()):,} code points "
            f"({_first(d)}): those characters normalize differently")


def _pre(d, have, want) -> str:
    return (f"the word split differs: the file has {_one(have.pre_tokenizer)}, the source gives "
            f"{_one(want.pre_tokenizer)}")


def _merges(d, have, want) -> str:
    c = d.counts
    parts = []
    if c.get("added"):
        parts.append(f"{c['added']:,} merge(s) missing from the file (first: {_first(d, '+')}): words that need "
                     "them come out in more, smaller pieces")
    if c.get("removed"):
        parts.append(f"{c['removed']:,} merge(s) the source does not have")
    if c.get("relative order changed"):
        parts.append("merges in another priority order: some words merge differently")
    return "; ".join(parts) or _generic(d, have, want)


def _vocab(d, have, want) -> str:
    c = d.counts
    parts = [f"{c[k]:,} token(s) {w}" for k, w in (("added", "missing from the file"), ("removed", "only in the file"),
                                                   ("re-numbered", "with other ids")) if c.get(k)]
    return "the vocabulary differs: " + ", ".join(parts) + f" (first: {_first(d)})"


def _specials(d, have, want) -> str:
    names = {"prefix": "ids put before every text (BOS)", "stop": "stop ids (where generation ends)",
             "special": "tokens split out of the text"}
    by = {}
    for c in d.changes:
        kind, _, what = c.where.partition(" ")
        by.setdefault(kind, []).append(("missing " if c.op == "+" else "extra " if c.op == "-" else "reordered ")
                                       + show(what if c.op != "~" else ""))
    order = sorted(by, key=lambda k: list(names).index(k) if k in names else len(names))  # what changes ids first
    parts = [f"{names.get(k, k)}: {', '.join(by[k][:4])}{' …' if len(by[k]) > 4 else ''}" for k in order]
    return "the header differs: " + "; ".join(parts)


def _added(d, have, want) -> str:
    c = d.counts
    return (f"the added tokens differ ({', '.join(f'{n} {k}' for k, n in c.items() if n)}; first: {_first(d)}): "
            "those tokens are matched (or not) inside the text differently")


def _post(d, have, want) -> str:
    return (f"the post-processor differs: the file has {_one(have.post_processor)}, the source gives "
            f"{_one(want.post_processor)}: the ids around the text (BOS/EOS) differ")


def _chat(d, have, want) -> str:
    fields = [c.where for c in d.changes if c.op == "~"]
    text = have.chat.text != want.chat.text
    if not have.chat.text and want.chat.text:
        return "the file embeds no chat template: the app has no way to render a chat prompt"
    parts = (["the chat template's text differs"] if text else []) + [f"{f} differs" for f in fields]
    return "; ".join(parts) + ": chat prompts may render differently"


def _decoder(d, have, want) -> str:
    return f"the decoder differs: the file has {_one(have.decoder)}, the source gives {_one(want.decoder)}"


def _model(d, have, want) -> str:
    return "the model's settings differ: " + ", ".join(f"{c.where} {show(c.a)} -> {show(c.b)}" for c in d.changes[:4])


def _one(component) -> str:
    return clip(one_line(component), 90) if component is not None else "none"


def _first(d, op: str | None = None) -> str:
    c = next((c for c in d.changes if op is None or c.op == op), None)
    return show(repr(c.where)) if c is not None else "-"


_CAUSE = {"normalizer": _normalizer, "tables": _tables, "pre_tokenizer": _pre, "merges": _merges, "vocab": _vocab,
          "specials": _specials, "added_tokens": _added, "post_processor": _post, "chat_template": _chat,
          "decoder": _decoder, "model": _model}
