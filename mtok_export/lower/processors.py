"""Post-processor lowering (spec 2.9, DESIGN 3): the tokens the HF post-processor adds around a
single sequence become the header prefix list (read by every runtime) plus an op program for the
suffix (applied only by MNN HEAD).  BOS comes from exactly one place."""

from __future__ import annotations

from dataclasses import replace

from .. import losses as L
from ..chat.render import bos_placement, renders
from ..corpus import builtin_chats
from ..ir import processors as R
from ..ir.models import vocab_of


def single_parts(p, jp: str = "$.post_processor") -> tuple[tuple | None, list[tuple[str, str, str]]]:
    """-> ((prefix ids, suffix ids) that `p` adds to one sequence, or None when it cannot be
    split that way), and why each dropped component was dropped: (component, json path, reason)."""
    dropped: list[tuple[str, str, str]] = []
    return _split(p, jp, dropped), dropped


def single_prefix(p) -> tuple[int, ...]:
    """The ids `p` puts before one sequence (empty when it adds none or cannot be split)."""
    parts, _ = single_parts(p)
    return tuple(parts[0]) if parts else ()


def split_single(lw, p, jp: str):
    """`single_parts`, recording a `post-dropped` loss in `lw` for each dropped component."""
    parts, dropped = single_parts(p, jp)
    for component, where, reason in dropped:
        lw.loss(L.POST_DROPPED, component, where, reason)
    return parts


def _split(p, jp: str, dropped: list):
    if p is None or isinstance(p, R.ByteLevel):
        return (), ()
    if isinstance(p, R.BertProcessing) or isinstance(p, R.RobertaProcessing):
        return (p.cls[1],), (p.sep[1],)
    if isinstance(p, R.TemplateProcessing):
        seq = [i for i, piece in enumerate(p.single) if not piece.special]
        if len(seq) != 1 or p.single[seq[0]].id != "A":
            dropped.append((f"post_processor {p.kind}", f"{jp}.single", "single template must hold $A exactly once"))
            return None
        k = seq[0]

        def ids(pieces):
            return tuple(i for piece in pieces for i in p.special_ids(piece.id))
        return ids(p.single[:k]), ids(p.single[k + 1:])
    if isinstance(p, R.Sequence):
        found = [(i, s) for i, c in enumerate(p.processors)
                 if (s := _split(c, f"{jp}.processors[{i}]", dropped)) != ()]
        if any(s is None for _, s in found):
            return None
        adding = [(i, s) for i, s in found if s != ((), ())]
        if len(adding) > 1:
            dropped.append(("post_processor Sequence", jp, "more than one child adds tokens"))
            return None
        return adding[0][1] if adding else ((), ())
    if isinstance(p, R.PostProgram):
        return None
    dropped.append((f"post_processor {p.kind}", jp, "unknown post-processor; dropped"))
    return None


def lower_post_processor(lw, tok):
    jp = "$.post_processor"
    if isinstance(tok.post_processor, R.PostProgram) or tok.prefix_ids:
        # Already lowered (read from a .mtok): the header prefix and the post program are what the
        # runtime runs; kept as they are (read as no post-processor, the prefix would be dropped).
        return tok
    parts = split_single(lw, tok.post_processor, jp)
    if parts is None:
        return replace(tok, post_processor=None)
    prefix, suffix = parts
    chat = tok.chat
    bos_id = _id_of(tok, chat.bos_token)
    where = "none"
    if prefix and bos_id in prefix:
        where = bos_placement(chat.text, chat.bos_token, builtin_chats())
    if prefix and lw.bos == "none":
        lw.loss(L.BOS_NONE, "post_processor", jp, f"--bos none: encode() no longer adds {list(prefix)}", "Hi")
        prefix = ()
    elif where == "start" or (where == "elsewhere" and lw.bos == "prefix"):
        # Keep BOS as the header prefix (so plain encode() adds it, as HF does) and stop the
        # template from rendering it too: the runtime passes `bos_token` only when non-empty.
        lw.did("bos-field-cleared", f"{jp}: BOS {chat.bos_token!r} comes from the header prefix; the "
               "embedded bos_token is left empty so chat prompts do not get it twice")
        if where == "elsewhere":
            lw.loss(L.BOS_INNER, "chat template", "$.chat_template", "the template renders BOS inside the "
                    "conversation too; with --bos prefix those inner BOS are not rendered")
        lw.cleared_bos = chat.bos_token
        chat = replace(chat, bos_token="")
    elif where == "elsewhere":
        lw.did("bos-from-template", f"{jp}: the chat template renders BOS itself, so the header "
               f"prefix {list(prefix)} is left out (the chat path would otherwise get it twice)")
        lw.loss(L.BOS_TEMPLATE, "post_processor", jp, f"encode() of plain text no longer adds {list(prefix)}; "
                "the chat template adds it (use --bos prefix to keep it)", "Hi")
        prefix = ()
    if prefix and chat.text and not lw.cleared_bos:
        lead = _prefix_text(tok, prefix)
        chat = _unrender_prefix(lw, chat, prefix, lead)
        if not lw.cleared_lead and where == "none" and lead not in chat.text:
            # The runtime encodes a rendered prompt with the header prefix, transformers' chat path
            # without it: a template that never writes the prefix out gets it on the device only.
            # No form is exact: `--bos none` moves the difference to plain encode() (bos-none).
            # (A template that does write it and kept it is no such loss: verify shows it doubled.)
            lw.loss(L.CHAT_PREFIX, "post_processor", jp, f"the chat template does not render the prefix "
                    f"{list(prefix)}; the runtime adds it to every chat prompt, transformers' apply_chat_template "
                    "does not (--bos none leaves it out of chats and of plain encode())")
    if prefix:
        lw.did("post-processor-prefix", f"{jp}: {list(prefix)} as the header prefix list")
    program = None
    if suffix:
        program = R.PostProgram((None, *suffix))
        lw.did("post-processor-program", f"{jp}: suffix {list(suffix)} as the post program")
        if not lw.target.appends_suffix:
            lw.loss(L.SUFFIX_NOT_APPENDED, "post_processor", jp, f"{lw.target.name} does not run the post program: encode() does not "
                    f"append {list(suffix)}", "Hi")
    return replace(tok, post_processor=program, prefix_ids=tuple(prefix), chat=chat)


def _prefix_text(tok, prefix) -> str:
    """The text of the prefix ids (added tokens first, then the vocabulary)."""
    wanted = set(prefix)
    by_id = {t.id: t.content for t in tok.added_tokens} | {i: t for t, i in vocab_of(tok.model).items() if i in wanted}
    return "".join(by_id.get(i, "") for i in prefix)


def _unrender_prefix(lw, chat, prefix, lead: str):
    """A template that renders the post-processor's tokens as text (GLM-4: `[gMASK]<sop>` first in
    every prompt): the runtime's chat path encodes the render and the header prefix adds those ids
    again.  Take the first place that writes them out of the template when every built-in
    conversation then renders the same text without them (checked, so a construct the cut would
    break keeps the template as it was); plain encode() keeps the prefix, as HF adds it.  `lead`: the
    prefix's text (`_prefix_text`)."""
    at = chat.text.find(lead) if lead else -1
    if at < 0:
        return chat
    chats = builtin_chats()
    before = renders(chat.text, chats, bos_token=chat.bos_token, eos_token=chat.eos_token)
    cut = chat.text[:at] + chat.text[at + len(lead):]
    after = renders(cut, chats, bos_token=chat.bos_token, eos_token=chat.eos_token)
    pairs = [(b, a) for b, a in zip(before, after) if b is not None]
    if not pairs or any(not b.startswith(lead) or b[len(lead):] != a for b, a in pairs):
        return chat
    lw.did("prefix-from-header", f"$.chat_template: the template renders {lead!r}, which the header prefix "
           f"{list(prefix)} adds as ids; left out of the embedded template so chat prompts hold it once")
    lw.cleared_lead = lead
    return replace(chat, text=cut)


def _id_of(tok, text: str):
    if not text:
        return None
    for t in tok.added_tokens:
        if t.content == text:
            return t.id
    return vocab_of(tok.model).get(text)
