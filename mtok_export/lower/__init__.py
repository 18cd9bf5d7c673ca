"""Lowering: rewrite an HF-shaped IR into what a chosen MNN runtime executes identically
(DESIGN section 3).  Each pass either rewrites exactly or records a `Loss`; nothing is dropped
without a record.  `lower()` returns the lowered IR, the losses and the passes that fired."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from .. import losses as L
from ..ir.models import vocab_of
from ..job_options import Forms  # the forms a pass may write: each an option, declared with the job's
from ..losses import Loss, LossKind
from ..target_type import Target
from . import decoders, models, normalizers, pre_tokenizers, processors, whole_words
from .chat_template import lint_chat_template

@dataclass
class Lowering:
    """State shared by the passes: the target (what its runtime can run), what was lost, which
    passes fired."""

    target: Target
    bos: str = "auto"
    losses: list[Loss] = field(default_factory=list)
    applied: dict[str, list[str]] = field(default_factory=dict)  # pass name -> details
    notes: list[str] = field(default_factory=list)
    # what the user should act on although nothing is lost (printed as `warning:`, in the report and manifest)
    warnings: list[str] = field(default_factory=list)
    meta: object = None  # the source's Metadata
    # the split patterns written for std::wregex uncapped (each match recurses once per character; a
    # robustness crash names the first, and the refusal offers `--regex-form bounded`)
    wregex: list[str] = field(default_factory=list)
    specials: tuple[str, ...] = ()  # special token texts (triggers for spacing losses)
    progress: object = None  # progress(done, total) while a Unicode table is built cold
    cleared_bos: str = ""  # BOS text taken out of the embedded template (the header prefix adds it)
    cleared_lead: str = ""  # literal prefix-token text taken out of the template (GLM-4's `[gMASK]<sop>`)
    chat_original: str = ""  # the chat template as read, when lowering rewrote it (for the manifest)
    forms: Forms = field(default_factory=Forms)
    # the vocab words the merges miss, each with its pieces, for `whole_words` (an ignore_merges BPE)
    whole_words: list = field(default_factory=list)

    def loss(self, kind: LossKind, component: str, json_path: str, reason: str, example: str = "",
             trigger: str | tuple[str, ...] = (), patch: tuple[str, object] | None = None, pattern: str = ""):
        trigger = (trigger,) if isinstance(trigger, str) and trigger else tuple(trigger or ())
        self.losses.append(Loss(kind, component, json_path, reason, example, trigger, patch, pattern))

    def did(self, pass_name: str, detail: str):
        self.applied.setdefault(pass_name, []).append(detail)

    @property
    def prefix_text(self) -> str:
        """What the source's chat prompts start with that the lowered template no longer renders,
        because the header prefix adds it as ids (verify compares the prompts without it)."""
        return self.cleared_bos or self.cleared_lead


# The marker tokens chat formats write around a turn (ChatML, Llama-3, Gemma, Mistral, DeepSeek, GLM,
# Phi...): a vocabulary holding one was likely made for chat, although its source ships no template.
_ROLE = re.compile(r"im_start|start_header_id|start_of_turn|\[/?INST\]|^<[|｜]?(user|assistant|system|human|bot)"
                   r"[|｜]?>$|\b(User|Assistant)\b", re.IGNORECASE)


def role_tokens(added) -> list[str]:
    """The added tokens (at most five) that mark a chat turn or role."""
    return [t.content for t in added if _ROLE.search(t.content)][:5]


def lower(tok, target: Target, bos: str = "auto", progress=None, forms: Forms = Forms()):
    """-> (lowered Tokenizer, Lowering) for `target` (a `.mtok` one: `targets.TARGETS`), written in
    `forms`.  Raises nothing for lossy input: read `.losses`."""
    if target.legacy:
        raise ValueError(f"{target.name} writes a tokenizer.txt: lower it with lower.legacy.lower_legacy")
    lw = Lowering(target, bos, meta=tok.meta, specials=tuple(t.content for t in tok.added_tokens if t.special),
                  progress=progress, forms=forms)
    normalizer = normalizers.lower_normalizer(lw, tok.normalizer, "$.normalizer")
    pre = pre_tokenizers.lower_pre_tokenizer(lw, tok.pre_tokenizer, "$.pre_tokenizer")
    if forms.max_word is not None:
        pre = pre_tokenizers.max_word(lw, tok.pre_tokenizer, pre, forms.max_word)
    tok = replace(
        tok,
        normalizer=pre_tokenizers.replacement_as_space(lw, pre, normalizer, tok.added_tokens),
        pre_tokenizer=pre,
        decoder=decoders.lower_decoder(lw, tok.decoder, "$.decoder", tokens=vocab_of(tok.model)),
    )
    pre_tokenizers.regex_gaps(lw, tok.pre_tokenizer, "$.pre_tokenizer")
    lw.losses.extend(tok.meta.differences)  # the reader's own, e.g. vs the sentencepiece library
    tok = models.lower_model(lw, tok)
    tok = processors.lower_post_processor(lw, tok)
    tok = models.lower_added_tokens(lw, tok)
    models.unigram_unk_nodes(lw, tok)  # on the vocabulary as written (control pieces unreachable)
    tok = models.fill_id_gaps(lw, tok)
    if lw.whole_words:  # after every real id is in the vocab: its new ids come after them
        tok = whole_words.apply(lw, tok, lw.whole_words)
    if forms.header_specials != "all":
        tok = models.header_specials(lw, tok, turn_mark=forms.header_specials == "needed")
    if tok.chat.text:
        tok = replace(tok, chat=replace(tok.chat, text=lint_chat_template(lw, tok.chat.text)))
    elif tok.chat.kind == "none" and lw.target.jinja:
        lw.loss(L.CHAT_TEMPLATE_MISSING, "chat template", "$.chat_template",
                f"{dict(tok.chat.detail).get('why', 'no template')}: give one with --chat-template FILE, or say the "
                "model has no chat with --no-chat")
    elif tok.chat.kind == "absent" and lw.target.jinja:  # nothing lost (DESIGN 5.1); a chat model's tokens warn
        roles = role_tokens(tok.added_tokens)
        if roles:
            lw.warnings.append(f"the source has no chat format, yet its vocabulary has role tokens ({', '.join(roles)}): "
                               "if this is a chat model, give its template with --chat-template FILE")
    if tok.chat.others:
        names = ", ".join(n for n, _ in tok.chat.others)
        lw.notes.append(f"the file carries one chat template ({tok.chat.name or 'default'}); "
                        f"not embedded: {names}")
        tok = replace(tok, chat=replace(tok.chat, others=()))
    return tok, lw
