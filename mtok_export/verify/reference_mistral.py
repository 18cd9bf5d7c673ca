"""The chat side of the tekken and mistral_common SentencePiece references (issue 32):
mistral_common's own `encode_chat_completion`.

When the export embeds the template mistral_common generates (`readers.chat_source`, kind
`mistral_common`), the chat checks compare the runtime's ids with what mistral_common itself makes
of each conversation, not with the generated template's render tokenized (which would only check
the template against itself).  The text too for a tekken file (the template writes what mistral_common
decodes); a SentencePiece file's template is rewritten to the file's form (`chat_source.
sp_segment_form`: no space for the dummy prefix), so its text is that template rendered by
transformers' Jinja, and only the ids are mistral_common's.  A conversation mistral_common refuses
(its validator: e.g. two user turns in a row) gives `None`, as a template's `raise_exception` does
for transformers, and is left out of the comparison."""

from __future__ import annotations

from pathlib import Path

from ..chat.render import render
from ..readers.chat_source import MISTRAL_SP_FILE

# the manifest's `chat_template.origin` kind whose chats mistral_common encodes (`chat_source.choose`)
GENERATED = "mistral_common"


def with_mistral_chats(ref, file: Path, tok, chats):
    """`ref` (the reference's `Reference`) with the chats of `tok`'s template compared as the module
    docstring says: when it is the one mistral_common generated, else no chats (None each: a
    template of the user's has no reference here)."""
    if tok.chat.kind != GENERATED:
        ref.chat_text, ref.chat_ids = [None] * len(chats), [None] * len(chats)
        return ref
    texts, ref.chat_ids = mistral_chats(file, chats)
    if MISTRAL_SP_FILE.search(file.name):
        c = tok.chat
        texts = [None if t is None else render(c.text, chat.messages, bos_token=c.bos_token, eos_token=c.eos_token,
                                               add_generation_prompt=True, tools=chat.tools)
                 for t, chat in zip(texts, chats)]
    ref.chat_text = texts
    return ref


def mistral_chats(file: Path, chats) -> tuple[list[str | None], list[list[int] | None]]:
    """(text, ids) of each chat as mistral_common's `encode_chat_completion` gives them for the
    tokenizer `file`, None for a conversation it refuses.  Every chat gets the generation prompt
    (mistral_common always ends a request so that the model answers next)."""
    # mistral_common: an optional library (the `references` extra), only for a Mistral tokenizer file
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    mt = MistralTokenizer.from_file(str(file))
    texts: list[str | None] = []
    ids: list[list[int] | None] = []
    for c in chats:
        try:
            out = mt.encode_chat_completion(ChatCompletionRequest(messages=list(c.messages), tools=c.tools))
        except Exception:  # noqa: BLE001  mistral_common's validation refuses this conversation
            texts.append(None)
            ids.append(None)
            continue
        # its text: the ids decoded with the control tokens kept (`Tokenized.text` is deprecated)
        texts.append(mt.instruct_tokenizer.tokenizer.decode(out.tokens, special_token_policy=SpecialTokenPolicy.KEEP))
        ids.append(list(out.tokens))
    return texts, ids
