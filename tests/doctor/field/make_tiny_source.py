"""Makes the tiny ChatML source kept as test data (tiny-chatml/source): a byte-level BPE of 400 tokens trained
here on four sentences, with NFC, three specials and a ChatML template.  Run once (README.md); its output is
committed, so the field file made from it by MNN's exporter stays paired with it."""
import json, sys
from pathlib import Path
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
tk = Tokenizer(models.BPE())
tk.normalizer = normalizers.NFC()
tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tk.decoder = decoders.ByteLevel()
text = ["Hello world, the tokens of a small test.", "Numbers 123 and words: tokenizer, token, test.",
        "The café serves crème brûlée; naïve résumé.", "You are a helpful assistant. What is the weather?"] * 4
tk.train_from_iterator(text, trainers.BpeTrainer(vocab_size=400, show_progress=False,
                                                 initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
tk.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")])
tk.save(str(out / "tokenizer.json"))
template = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
            "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
(out / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>",
    "pad_token": "<|endoftext|>", "bos_token": None, "chat_template": template, "model_max_length": 4096}, indent=1) + "\n")
