"""The root of the IR: one tokenizer, whatever file it came from or goes to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class AddedToken:
    id: int
    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True
    special: bool = False


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """What `apply_chat_template` needs.  `others` keeps a named-list's other templates."""

    text: str = ""
    bos_token: str = ""
    eos_token: str = ""
    clean_up_tokenization_spaces: bool = False
    others: tuple[tuple[str, str], ...] = ()
    name: str = field(default="", compare=False)  # "" = the default template
    source: str = field(default="", compare=False)  # file (and key) it came from
    # where the template came from (`readers.finish.SOURCE_KINDS`), and what says so: the encoder's
    # name and sha256 of a port, mistral_common's version, why there is none, ...
    kind: str = field(default="", compare=False)
    detail: tuple[tuple[str, str], ...] = field(default=(), compare=False)


# `--no-chat` as a `--chat-template` value: the model has no chat (`readers.chat_source`); a job records it so
NO_CHAT = ":no-chat"


@dataclass(frozen=True, slots=True)
class InputFile:
    path: str
    sha256: str


@dataclass(frozen=True, slots=True)
class Provenance:
    inputs: tuple[InputFile, ...] = ()
    tool_version: str = ""
    unicode_version: str = ""
    format: str = ""  # the `formats.Format` name the source was read as (it declares the reference)


@runtime_checkable
class Difference(Protocol):
    """Where the IR knowingly differs from the source's own library, as a reader records it: a
    `losses.Loss` of the reader layer.  The IR sits below `losses` and only carries these to the
    lowering, which reports them with its own; this is what the IR promises about them."""

    @property
    def code(self) -> str: ...

    @property
    def json_path(self) -> str: ...

    @property
    def reason(self) -> str: ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where in `text` the difference can act (empty: nowhere)."""


@dataclass(frozen=True, slots=True)
class Metadata:
    """Facts about the source that no tokenizer file format carries (excluded from equality)."""

    add_bos_token: bool | None = None
    add_eos_token: bool | None = None
    model_vocab_size: int | None = None  # embedding rows, from config.json
    stop_sources: tuple[tuple[int, str], ...] = ()  # (id, where it came from)
    notes: tuple[str, ...] = ()  # reader warnings worth showing
    tokenizer_class: str | None = None  # tokenizer_config.json, e.g. "LlamaTokenizer"
    legacy: bool | None = None  # tokenizer_config.json "legacy" (Llama-family spacing after specials)
    differences: tuple[Difference, ...] = ()  # where the IR knowingly differs from the source's library
    # The engine the split regexes were written for: "oniguruma" (HF) or "tiktoken" (a rank file's:
    # there `{m,n}+` is possessive, in Oniguruma a repeated repetition).
    regex_dialect: str = "oniguruma"
    # Every decision the source folder left open, taken once (`readers.interpretation.FolderInterpretation`):
    # the reader built this IR by it, and the reference is set up by it.
    interpretation: object = None


@dataclass(frozen=True, slots=True)
class Tokenizer:
    model: object
    normalizer: object | None = None
    pre_tokenizer: object | None = None
    decoder: object | None = None
    post_processor: object | None = None
    added_tokens: tuple[AddedToken, ...] = ()
    special_ids: tuple[int, ...] = ()  # header "special": split out before the model runs
    stop_ids: tuple[int, ...] = ()
    prefix_ids: tuple[int, ...] = ()  # header "prefix": prepended by the runtime on encode
    chat: ChatTemplate = ChatTemplate()
    meta: Metadata = field(default=Metadata(), compare=False)
    provenance: Provenance = field(default=Provenance(), compare=False)
