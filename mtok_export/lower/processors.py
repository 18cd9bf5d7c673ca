"""Post-processor lowering (spec 2.9, DESIGN 3): the tokens the HF post-processor adds around a
single sequence become the header prefix list (read by every runtime) plus an op program for the
suffix (applied only by MNN HEAD).  BOS comes from exactly one place."""

from __future__ import annotations

from dataclasses import replace

from ..ir import processors as R

_BOS_IN_TEMPLATE = ("bos_token", "<s>", "<|begin_of_text|>")


def split_single(lw, p, jp: str):
    """-> (prefix ids, suffix ids) that `p` adds to one sequence, or None after recording a loss."""
    if p is None or isinstance(p, R.ByteLevel):
        return (), ()
    if isinstance(p, R.BertProcessing) or isinstance(p, R.RobertaProcessing):
        return (p.cls[1],), (p.sep[1],)
    if isinstance(p, R.TemplateProcessing):
        seq = [i for i, piece in enumerate(p.single) if not piece.special]
        if len(seq) != 1 or p.single[seq[0]].id != "A":
            lw.loss("post-dropped", f"post_processor {p.kind}", f"{jp}.single", "single template must hold $A exactly once")
            return None
        k = seq[0]

        def ids(pieces):
            return tuple(i for piece in pieces for i in p.special_ids(piece.id))
        return ids(p.single[:k]), ids(p.single[k + 1:])
    if isinstance(p, R.Sequence):
        found = [(i, s) for i, c in enumerate(p.processors)
                 if (s := split_single(lw, c, f"{jp}.processors[{i}]")) != ()]
        if any(s is None for _, s in found):
            return None
        adding = [(i, s) for i, s in found if s != ((), ())]
        if len(adding) > 1:
            lw.loss("post-dropped", "post_processor Sequence", jp, "more than one child adds tokens")
            return None
        return adding[0][1] if adding else ((), ())
    if isinstance(p, R.PostProgram):
        return None
    lw.loss("post-dropped", f"post_processor {p.kind}", jp, "unknown post-processor; dropped")
    return None


def lower_post_processor(lw, tok):
    jp = "$.post_processor"
    parts = split_single(lw, tok.post_processor, jp)
    if parts is None:
        return replace(tok, post_processor=None)
    prefix, suffix = parts
    renders_bos = bool(tok.chat.text) and any(s in tok.chat.text for s in _BOS_IN_TEMPLATE)
    if prefix and lw.bos == "none":
        lw.loss("bos-none", "post_processor", jp, f"--bos none: encode() no longer adds {list(prefix)}", "Hi")
        prefix = ()
    elif prefix and renders_bos and lw.bos == "auto":
        lw.did("bos-from-template", f"{jp}: the chat template renders BOS itself, so the header "
               f"prefix {list(prefix)} is left out (the chat path would otherwise get it twice)")
        lw.loss("bos-template", "post_processor", jp, f"encode() of plain text no longer adds {list(prefix)}; "
                "the chat template adds it", "Hi")
        prefix = ()
    elif prefix and renders_bos:
        lw.loss("double-bos", "post_processor", jp, f"--bos prefix: chat prompts get {list(prefix)} twice "
                "(template and header prefix)")
    if prefix:
        lw.did("post-processor-prefix", f"{jp}: {list(prefix)} as the header prefix list")
    program = None
    if suffix:
        program = R.PostProgram((None, *suffix))
        lw.did("post-processor-program", f"{jp}: suffix {list(suffix)} as the post program")
        if lw.target != "mnn-head":
            lw.loss("suffix-not-appended", "post_processor", jp, f"{lw.target} does not run the post program: encode() does not "
                    f"append {list(suffix)}", "Hi")
    return replace(tok, post_processor=program, prefix_ids=tuple(prefix))
