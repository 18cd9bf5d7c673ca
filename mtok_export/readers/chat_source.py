"""Where an export's chat template comes from (DESIGN 5.1, issue 32): the one place that chooses it,
for every input format.  In this order:

1. `--no-chat`: a base model with no chat at all (kind `no-chat`);
2. `--chat-template NAME|FILE`: a named template of the configs, or a file (kind `--chat-template`);
3. the template a self-contained file carries (GGUF's `tokenizer.chat_template`, kind `gguf`);
4. the directory's, as transformers reads it: `chat_template.jinja` (kind `chat_template.jinja`),
   else `chat_template.json` or tokenizer_config.json's `chat_template` (kind `configs`);
5. a port shipped with this tool (`chat.ports`) of a prompt format the directory ships as Python
   code, recognized by the encoder's sha256 (read, never imported or run; kind `port`);
6. the template mistral_common generates from a tekken.json or a mistral_common SentencePiece file
   (`*.model.vN`), the format's reference library (kind `mistral_common`).  For a SentencePiece
   file the template is rewritten to the file's form (`sp_segment_form`), and the control pieces it
   writes are split out of the text (`split_controls`): its chats then get mistral_common's ids on
   MNN (verify compares them with `encode_chat_completion`'s);
7. none: kind `no-chat` when the configs say the model has no chat (an encoder or seq2seq class, a
   WordPiece vocabulary, BERT's or RoBERTa's post-processor); kind `absent` when the source carries
   no chat format anywhere (no template, no prompt encoder, no generator: a base model or a bare
   vocabulary), which loses nothing (DESIGN 5.1: the file has none either; the lowering warns where
   the vocabulary's role tokens suggest a chat model); else `none`: the source carries a prompt
   format this tool cannot embed (an encoder version it has no port of, a tekken file without
   mistral_common), with the reason, which the lowering records as the loss `chat-template-missing`.

Every kind records what says so in `ChatTemplate.detail` (the manifest's `chat_template.source`)."""

from __future__ import annotations

import hashlib
import marshal
import re
from pathlib import Path

from .. import cache
from .. import losses as L
from ..chat.nesting import check_template
from ..chat.ports import PORTS
from ..errors import InputError
from ..ir import ChatTemplate
from ..ir.tokenizer import NO_CHAT
from ..losses import Loss
from .hf_config import Templates, find_templates, pick_template

SOURCE_KINDS = ("no-chat", "--chat-template", "gguf", "chat_template.jinja", "configs", "port", "mistral_common",
                "absent", "none")
# tokenizer classes of models that do not chat (encoders, seq2seq, speech): a missing template is right
NO_CHAT_CLASSES = re.compile(r"^(Bert|DistilBert|Roberta|XLMRoberta|Camembert|Albert|Electra|MPNet|DebertaV?2?|"
                             r"T5|MT5|Bart|MBart\w*|Marian|Pegasus|Whisper|CLIP|Wav2Vec2\w*)Tokenizer(Fast)?$")
MISTRAL_SP_FILE = re.compile(r"\.model\.v\d+(m\d+)?$")
_MISTRAL_KIND = "mistral-chat-template"


def sp_segment_form(template: str, controls: frozenset[str]) -> str:
    """mistral_common's template for a SentencePiece file, in the form the exported file encodes as
    mistral_common does.  mistral_common encodes each text segment apart with sentencepiece, which
    prefixes it with "▁" (the dummy prefix); its template writes that prefix as a space ("[INST] Hi":
    [INST], ▁Hi).  The file splits the control pieces out and its normalizer prefixes every chunk
    between them (transformers' per-chunk Prepend), so that space would be written twice ("▁▁Hi").
    Dropped here: where [INST] is a control piece (v2 and later), one space after each control
    token and the lone space mistral_common writes after [/INST] or [/TOOL_RESULTS] before the next
    segment (its `add_space`); in v1 ([INST] is text), the space of " [INST] ", which always follows
    <s> or </s>.  Proved on MNN against `encode_chat_completion` (tests/readers/test_chat_source.py)
    and checked again by every verify (`verify.reference_mistral`)."""
    if "[INST]" in controls:
        marks = "|".join(re.escape(c) for c in sorted(controls, key=len, reverse=True))
        template = re.sub(rf"({marks}) ", r"\1", template)
        return re.sub(r"\{\{-?\s*' '\s*-?\}\}", "", template)
    return template.replace("' [INST] '", "'[INST] '")


def split_controls(differences: tuple, chat: ChatTemplate) -> tuple:
    """A bare SentencePiece model keeps its control pieces as text, as sentencepiece does
    (`sp-control-text`, lowered by `lower.models.sentencepiece_controls`); when the template
    mistral_common generated is embedded, its chats write them as tokens, so they are split out as
    transformers does, and control text in ordinary text is an edge difference (`sp-added-token-text`)."""
    found = next((x for x in differences if x.kind is L.SP_CONTROL_TEXT), None)
    if found is None or chat.kind != "mistral_common":
        return differences
    other = next((x for x in differences if x.kind is L.SP_ADDED_TOKEN_TEXT), None)
    merged = Loss(L.SP_ADDED_TOKEN_TEXT, "reader", "$.added_tokens", "control pieces are split out of the text, as "
                  "the embedded chat template (mistral_common's) needs; the sentencepiece library encodes their "
                  "text as ordinary text", trigger=found.trigger + (other.trigger if other else ()))
    return tuple(merged if x is found else x for x in differences if x is not other)


def choose(*, directory: Path | None, tcfg: dict, config_path: Path, carried: tuple[str, str] | None,
           main: Path, mistral_file: Path | None, choice: str | None, bos: str, eos: str,
           inputs: list, encoder_only: str = "") -> ChatTemplate:
    """The template of one input (see the module docstring); files read for it are appended to
    `inputs` (provenance).  `encoder_only`: why the reader's pipeline is an encoder model's ("": not)."""
    cleanup = tcfg.get("clean_up_tokenization_spaces") is True

    def made(text, kind, source, detail=(), name="", others=()):
        return ChatTemplate(text, bos, eos, cleanup, tuple(others), name=name, source=source, kind=kind,
                            detail=tuple(detail) + ((("sha256", _sha(text)),) if text else ()))

    if choice == NO_CHAT:
        return made("", "no-chat", "--no-chat", (("by", "--no-chat"),))
    if carried is not None:
        text, source = carried
        if choice is not None:
            try:
                text, source = Path(choice).read_text(encoding="utf-8"), choice
            except (OSError, UnicodeDecodeError) as e:
                raise InputError(f"--chat-template {choice}: a {main.suffix[1:].upper() or 'self-contained'} "
                                 f"file holds one template; give a UTF-8 file ({getattr(e, 'strerror', None) or e})"
                                 ) from None
            inputs.append(Path(choice))
            check_template(text, choice)
            return made(text, "--chat-template", source)
        if text:
            check_template(text, str(main))
            return made(text, "gguf", source)
        return _none(made, tcfg, encoder_only, [f"{main.name} carries no tokenizer.chat_template"], carries=False)
    where = directory or Path(".")
    templates = find_templates(where, tcfg, config_path) if directory is not None else Templates()
    text, name, source, others = pick_template(templates, where, config_path, choice, inputs)
    if text:
        kind = ("--chat-template" if choice is not None and source == choice
                else "chat_template.jinja" if templates.source == "chat_template.jinja" else "configs")
        return made(text, kind, source, name=name, others=others)
    why = ["no chat_template in the configs and no chat_template.jinja"]
    carries = False  # the source has a prompt format (as code, or a generator's input) this tool could not embed
    for encoder in PORTS.encoder_files(where) if directory is not None else ():
        data = encoder.read_bytes()
        port = PORTS.by_encoder(data)
        inputs.append(encoder)
        if port is not None:
            detail = (("encoder", encoder.name), ("encoder_sha256", port.sha256), ("port", port.template))
            return made(port.text, "port", f"{port.template} (this tool's port of {encoder.name})", detail)
        why.append(f"{encoder.name} (sha256 {hashlib.sha256(data).hexdigest()}) is an encoder version this tool "
                   "has no port of")
        carries = True
    if mistral_file is not None:
        generated, reason = _mistral_template(mistral_file)
        if generated:
            return made(generated, "mistral_common", f"generated by mistral_common from {mistral_file.name}",
                        (("generator", f"mistral_common {cache.version('mistral_common')}"),
                         ("from", mistral_file.name)))
        why.append(reason)
        carries = True
    return _none(made, tcfg, encoder_only, why, carries)


def _none(made, tcfg: dict, encoder_only: str, why: list[str], carries: bool) -> ChatTemplate:
    cls = tcfg.get("tokenizer_class")
    if isinstance(cls, str) and NO_CHAT_CLASSES.match(cls):
        return made("", "no-chat", "", (("detected", f"tokenizer_class {cls} is a model that does not chat"),))
    if encoder_only:
        return made("", "no-chat", "", (("detected", encoder_only),))
    if not carries:  # nothing to lose: the file has no chat format, as the source has none
        return made("", "absent", "", (("why", "no chat format in the source: " + "; ".join(why)),))
    return made("", "none", "", (("why", "; ".join(why)),))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _mistral_template(path: Path) -> tuple[str, str]:
    """(the template mistral_common generates from `path`, "") or ("", why not).  Cached by the
    file's content and mistral_common's version (loading a tekken file takes a second)."""
    try:
        # mistral_common: an optional library (the `references` extra); without it, a reason why not
        from mistral_common.integrations.chat_templates.chat_templates import convert_tokenizer_to_chat_template
    except ImportError:
        return "", (f"mistral_common is not installed: the template of {path.name} is generated by it "
                    "(pip install mistral_common)")

    def generate():
        try:
            text = convert_tokenizer_to_chat_template(str(path))
            return {"text": sp_segment_form(text, _controls(path)) if MISTRAL_SP_FILE.search(path.name) else text}
        except Exception as e:  # noqa: BLE001  any refusal of the reference library is a reason, not a crash
            return {"error": f"mistral_common generates no template from {path.name} ({type(e).__name__}: {e})"}

    # the rewrite's own code is in the key: a change to it is not served the old form from the cache
    digest = cache.key(_MISTRAL_KIND, files=(path,), dists=("mistral_common", "sentencepiece"),
                       blobs=(marshal.dumps(sp_segment_form.__code__),))
    out = cache.computed(_MISTRAL_KIND, digest, generate,
                         valid=lambda v: isinstance(v, dict) and isinstance(v.get("text", v.get("error")), str))
    return out.get("text", ""), out.get("error", "")


def _controls(path: Path) -> frozenset[str]:
    """The control pieces of a SentencePiece file, by the sentencepiece library (mistral_common reads
    these files with it)."""
    import sentencepiece as spm  # sentencepiece (~15 ms): only for a Mistral .model file, not cached

    sp = spm.SentencePieceProcessor(model_file=str(path))
    return frozenset(sp.id_to_piece(i) for i in range(sp.get_piece_size()) if sp.is_control(i))
