"""Build the small sample tokenizers in ``samples/`` from ``samples/text.txt``.

Run ``python samples/make_samples.py`` (add ``--check`` to also run the sanity checks).
Every sample is trained here from ``text.txt``; nothing is downloaded. Output is
byte-for-byte reproducible: SentencePiece runs single-threaded with a fixed seed and no
sampling (Unigram scores change with ``num_threads``), the WordPiece trainer's hash-order
numbering is pinned (see ``make_bert``), JSON we write ourselves has sorted keys, and
``tokenizer.json`` is saved by ``tokenizers`` as is.

Samples and what they imitate:

* ``qwen-bpe/`` -- Qwen2 / Qwen2.5: byte-level BPE (``BpeTrainer``), NFC normalizer,
  the Qwen2 split regex followed by ByteLevel, ``<|endoftext|>``, ``<|im_start|>``,
  ``<|im_end|>`` as special added tokens after the model vocab, ``<think>`` and
  ``</think>`` as non-special added tokens, a ChatML chat template, a list-valued
  ``eos_token_id`` in ``generation_config.json`` and a padded ``vocab_size`` in ``config.json``.
* ``llama-spm/`` -- Llama 2: SentencePiece BPE with byte fallback (``tokenizer.model``) and
  its ``tokenizer.json`` from transformers' ``LlamaConverter`` (legacy Prepend/Replace
  normalizer, ByteFallback decoder, ``<s> $A`` template), an ``[INST]`` chat template.
* ``t5-unigram/`` -- T5: SentencePiece Unigram with ``nmt_nfkc`` (``spiece.model``) and its
  ``tokenizer.json`` from transformers' ``T5Converter`` in the layout of the hub's t5-small
  (Precompiled normalizer, WhitespaceSplit + Metaspace), ``$A </s>`` template, 5 ``<extra_id_N>``.
* ``bert-wordpiece/`` -- bert-base-uncased: WordPiece (``WordPieceTrainer``), BertNormalizer
  (lowercase, strip accents), BertPreTokenizer, ``[CLS] $A [SEP]`` template, ``vocab.txt``.
"""

import io
import json
import sys
import warnings
from pathlib import Path

import sentencepiece as spm
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                        processors, trainers)

HERE = Path(__file__).resolve().parent
TEXT = (HERE / "text.txt").read_text(encoding="utf-8")
LINES = [line for line in TEXT.splitlines() if line.strip()]

QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

CHATML_TEMPLATE = """\
{%- if messages[0]['role'] == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
    {%- set loop_messages = messages %}
{%- endif %}
{%- for message in loop_messages %}
    {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
"""

LLAMA2_TEMPLATE = """\
{%- if messages[0]['role'] == 'system' %}
    {%- set system_prefix = '<<SYS>>\\n' + messages[0]['content'] | trim + '\\n<</SYS>>\\n\\n' %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set system_prefix = '' %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- set content = (system_prefix if loop.first else '') + message['content'] | trim %}
        {{- bos_token + '[INST] ' + content + ' [/INST]' }}
    {%- else %}
        {{- ' ' + message['content'] | trim + ' ' + eos_token }}
    {%- endif %}
{%- endfor %}
"""


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                    encoding="utf-8", newline="\n")


def token_entry(content: str, special: bool = True) -> dict:
    return {"content": content, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": special}


def added_tokens_decoder(tok: Tokenizer) -> dict:
    added = sorted(tok.get_added_tokens_decoder().items())
    return {str(i): token_entry(t.content, t.special) for i, t in added}


def train_spm(**options) -> bytes:
    """Train SentencePiece in memory; single thread, no sampling or shuffling, fixed seed."""
    buf = io.BytesIO()
    spm.set_random_generator_seed(20240101)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(LINES), model_writer=buf, num_threads=1, input_sentence_size=0,
        shuffle_input_sentence=False, minloglevel=2, **options)
    return buf.getvalue()


class _SlowShim:
    """Just enough of a slow tokenizer for transformers' SentencePiece converters."""

    def __init__(self, vocab_file: Path, **attrs):
        self.vocab_file = str(vocab_file)
        self._sp = spm.SentencePieceProcessor(model_file=self.vocab_file)
        self.__dict__.update(attrs)

    def convert_ids_to_tokens(self, i):
        return self._sp.id_to_piece(i)

    def convert_tokens_to_ids(self, t):
        return self._sp.piece_to_id(t)


def make_qwen(out: Path) -> None:
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    # decoders.ByteLevel() takes no arguments; set the flags Qwen2's file carries.
    decoder = decoders.ByteLevel()
    decoder.__setstate__(b'{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}')
    tok.decoder = decoder
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=3000, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(TEXT.splitlines(keepends=True), trainer=trainer)
    tok.model.continuing_subword_prefix = ""
    tok.model.end_of_word_suffix = ""
    # Like Qwen2: special tokens live after the model vocab, as added tokens only.
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")])
    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in ("<think>", "</think>")])
    tok.save(str(out / "tokenizer.json"))

    eot, im_end = tok.token_to_id("<|endoftext|>"), tok.token_to_id("<|im_end|>")
    write_json(out / "tokenizer_config.json", {
        "add_bos_token": False, "add_prefix_space": False,
        "added_tokens_decoder": added_tokens_decoder(tok),
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "bos_token": None, "chat_template": CHATML_TEMPLATE, "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>", "errors": "replace", "model_max_length": 32768,
        "pad_token": "<|endoftext|>", "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer", "unk_token": None,
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": eot, "do_sample": True, "eos_token_id": [im_end, eot], "pad_token_id": eot,
        "repetition_penalty": 1.05, "temperature": 0.7, "top_k": 20, "top_p": 0.8,
    })
    # Real checkpoints pad the embedding matrix past the tokenizer's size.
    write_json(out / "config.json", {
        "architectures": ["Qwen2ForCausalLM"], "bos_token_id": eot, "eos_token_id": im_end,
        "model_type": "qwen2", "tie_word_embeddings": True,
        "vocab_size": -(-tok.get_vocab_size() // 128) * 128,
    })


def make_llama(out: Path) -> None:
    from transformers.convert_slow_tokenizer import LlamaConverter
    from transformers.tokenization_utils_base import generate_merges

    model = train_spm(
        model_type="bpe", vocab_size=2000, byte_fallback=True, character_coverage=0.99995,
        normalization_rule_name="identity", add_dummy_prefix=True, remove_extra_whitespaces=False,
        split_digits=True, allow_whitespace_only_pieces=True, unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    (out / "tokenizer.model").write_bytes(model)

    class Extractor:
        # transformers 5.x LlamaConverter calls extract(vocab_scores), which its
        # SentencePieceExtractor no longer accepts; rank merges by piece score instead.
        def __init__(self, model_file):
            pass

        def extract(self, vocab_scores):
            vocab = {piece: i for i, (piece, _) in enumerate(vocab_scores)}
            return vocab, generate_merges(vocab, vocab_scores)

    class Converter(LlamaConverter):
        SpmExtractor = Extractor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = Converter(_SlowShim(out / "tokenizer.model", legacy=True)).converted()
    tok.add_special_tokens([AddedToken("<unk>", normalized=False, special=True)])
    # What LlamaTokenizerFast sets for add_bos_token=True, add_eos_token=False.
    tok.post_processor = processors.TemplateProcessing(
        single="<s>:0 $A:0", pair="<s>:0 $A:0 <s>:1 $B:1", special_tokens=[("<s>", 1)])
    tok.save(str(out / "tokenizer.json"))

    write_json(out / "tokenizer_config.json", {
        "add_bos_token": True, "add_eos_token": False,
        "added_tokens_decoder": added_tokens_decoder(tok),
        "bos_token": "<s>", "chat_template": LLAMA2_TEMPLATE, "clean_up_tokenization_spaces": False,
        "eos_token": "</s>", "legacy": True, "model_max_length": 4096, "pad_token": None,
        "sp_model_kwargs": {}, "tokenizer_class": "LlamaTokenizer", "unk_token": "<unk>",
    })
    write_json(out / "generation_config.json", {
        "bos_token_id": 1, "do_sample": True, "eos_token_id": 2, "max_length": 4096,
        "pad_token_id": 0, "temperature": 0.6, "top_p": 0.9,
    })


def make_t5(out: Path, extra_ids: int = 5) -> None:
    from transformers.convert_slow_tokenizer import T5Converter

    model = train_spm(
        model_type="unigram", vocab_size=2000, normalization_rule_name="nmt_nfkc",
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
    (out / "spiece.model").write_bytes(model)

    class Converter(T5Converter):
        # transformers 5.x emits Sequence[Precompiled, Strip, Replace] + Metaspace; keep the
        # layout of the t5-small tokenizer.json that people actually download.
        def normalizer(self, proto):
            return normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap)

        def pre_tokenizer(self, replacement, add_prefix_space):
            return pre_tokenizers.Sequence([
                pre_tokenizers.WhitespaceSplit(),
                pre_tokenizers.Metaspace(replacement=replacement, prepend_scheme="always"),
            ])

    tok = Converter(_SlowShim(out / "spiece.model", _extra_ids=extra_ids)).converted()
    extras = [f"<extra_id_{i}>" for i in range(extra_ids)]
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in ["<unk>", *extras]])
    tok.save(str(out / "tokenizer.json"))

    write_json(out / "tokenizer_config.json", {
        "added_tokens_decoder": added_tokens_decoder(tok),
        "additional_special_tokens": extras, "clean_up_tokenization_spaces": True,
        "eos_token": "</s>", "extra_ids": extra_ids, "legacy": True, "model_max_length": 512,
        "pad_token": "<pad>", "sp_model_kwargs": {}, "tokenizer_class": "T5Tokenizer",
        "unk_token": "<unk>",
    })


def make_bert(out: Path) -> None:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

    def pipeline() -> Tokenizer:
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(
            clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
        return tok

    # The trainer numbers "##x" pieces in hash-map order, which changes from run to run
    # and also breaks ties between merges differently. Seeding every "##x" as a special
    # token pins those ids; the model is then rebuilt without them as added tokens.
    tok = pipeline()
    pieces = (tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(line)) for line in LINES)
    words = [w for piece in pieces for w, _ in piece]
    seeded = sorted({"##" + c for w in words for c in w[1:]})
    trainer = trainers.WordPieceTrainer(vocab_size=2000, special_tokens=specials + seeded,
                                        show_progress=False)
    tok.train_from_iterator(TEXT.splitlines(keepends=True), trainer=trainer)
    vocab = tok.get_vocab(with_added_tokens=False)
    tok = pipeline()
    tok.model = models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100)
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in specials])
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.save(str(out / "tokenizer.json"))
    tok.model.save(str(out))  # vocab.txt, one token per line in id order

    write_json(out / "tokenizer_config.json", {
        "added_tokens_decoder": added_tokens_decoder(tok), "clean_up_tokenization_spaces": True,
        "cls_token": "[CLS]", "do_basic_tokenize": True, "do_lower_case": True, "mask_token": "[MASK]",
        "model_max_length": 512, "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": True,
        "tokenize_chinese_chars": True, "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]",
    })


SAMPLES = {"qwen-bpe": make_qwen, "llama-spm": make_llama, "t5-unigram": make_t5,
           "bert-wordpiece": make_bert}

PROBES = [
    "Hello, world! It's 2024-03-17 and the lamp turns at 3.5 rpm.",
    "  two leading spaces,\ttabs\tand\nnew lines\n\n",
    "naïve café résumé — Straße, 東京タワー, 서울, Москва, مرحبا 👋🏽",
    "<|im_start|>user\nhi<think>x</think><|im_end|>",
]


def check() -> None:
    for name in SAMPLES:
        tok = Tokenizer.from_file(str(HERE / name / "tokenizer.json"))
        print(f"{name}: vocab {tok.get_vocab_size(with_added_tokens=False)} "
              f"(+{len(tok.get_added_tokens_decoder())} added tokens)")
        for text in PROBES:
            enc, ids = tok.encode(text), tok.encode(text, add_special_tokens=False).ids
            same = tok.decode(ids, skip_special_tokens=False) == text
            print(f"  {len(enc.ids):3d} ids, round trip {same!s:5}: {enc.tokens[:12]}")
    for name, model_file in (("llama-spm", "tokenizer.model"), ("t5-unigram", "spiece.model")):
        sp = spm.SentencePieceProcessor(model_file=str(HERE / name / model_file))
        tok = Tokenizer.from_file(str(HERE / name / "tokenizer.json"))
        picked = LINES[:: len(LINES) // 20][:20]
        for label, texts in (("20 sampled lines", picked), ("lines", LINES), ("probes", PROBES)):
            bad = [t for t in texts if sp.encode(t) != tok.encode(t, add_special_tokens=False).ids]
            agreed = len(texts) - len(bad)
            print(f"{name}: {model_file} vs tokenizer.json agree on {agreed}/{len(texts)} {label}")
            for t in bad:
                print(f"  differs: {t[:70]!r}")


def main() -> None:
    for name, make in SAMPLES.items():
        out = HERE / name
        out.mkdir(exist_ok=True)
        make(out)
        print(f"wrote {out.relative_to(HERE.parent)}/")
    if "--check" in sys.argv[1:]:
        check()


if __name__ == "__main__":
    main()
