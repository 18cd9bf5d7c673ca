"""The chat side of the tekken reference (issue 32): mistral_common's own `encode_chat_completion`.

When the export embeds the template mistral_common generates from a tekken.json
(`readers.chat_source`, kind `mistral_common`), the chat checks compare the runtime's render and
ids with what mistral_common itself makes of each conversation: its text and ids, not the generated
template rendered by transformers (which would only check the template against itself).  A
conversation mistral_common refuses (its validator: e.g. two user turns in a row) gives `None`, as
a template's `raise_exception` does for transformers, and is left out of the comparison."""

from __future__ import annotations

from pathlib import Path

# the manifest's `chat_template.origin` kind whose chats mistral_common encodes (`chat_source.choose`)
GENERATED = "mistral_common"


def mistral_chats(file: Path, chats) -> tuple[list[str | None], list[list[int] | None]]:
    """(text, ids) of each chat as mistral_common's `encode_chat_completion` gives them for the
    tokenizer `file`, None for a conversation it refuses.  Every chat gets the generation prompt
    (mistral_common always ends a request so that the model answers next)."""
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
