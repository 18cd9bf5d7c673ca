"""Generate the built-in verification corpus: mtok_export/data/{corpus,chats}.jsonl.

The .jsonl files are the committed artifacts; this script is how they were written and must
reproduce them byte for byte (`python scripts/make_corpus.py --check` exits 1 if they differ).

Every string here was written for this project.  Invisible or normalization-sensitive characters
(controls, format characters, unusual spaces, generic combining marks, conjoining jamo,
variation selectors, canonical singletons such as U+212B) are written to the JSONL as \\uXXXX
escapes, so that neither an editor nor a Unicode-normalizing tool can silently change them; the
files also never contain a raw U+2028/U+2029/U+0085, so splitting them on any newline is safe.

Tags come from `mtok_export.corpus.TAGS` / `CHAT_TAGS`; this script refuses unknown tags,
duplicate ids and duplicate texts.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import sys
import unicodedata
from pathlib import Path

from mtok_export.corpus import CHAT_TAGS, TAGS

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "mtok_export" / "data"

NFD = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
NFC = lambda s: unicodedata.normalize("NFC", s)  # noqa: E731

# ---------------------------------------------------------------------------------------------
# Plain-text samples: (id, tags, text)
# ---------------------------------------------------------------------------------------------

PARAGRAPH = (
    "A tokenizer is a small program with a large responsibility. Before a language model sees a "
    "single word, the tokenizer has already decided how that word will be cut into pieces, which "
    "pieces exist at all, and what number each piece is given. If two implementations of the same "
    "tokenizer disagree about even one of those numbers, the model on the phone and the model on "
    "the server are no longer reading the same text, and nobody notices until an answer comes back "
    "subtly wrong. The hard cases are rarely the ordinary sentences. They hide in the corners: a "
    "run of four spaces at the start of a line of code, a tab followed by a newline, the digits of "
    "a long telephone number, an accented letter that can be written as one code point or as two, "
    "a family emoji glued together with invisible joiners, or a string that merely looks like a "
    "special token without being one. Normalization rules fold some of these variants together "
    "and leave others apart; pre-tokenizers split text on spaces, punctuation, digits or script "
    "boundaries, each in a slightly different way; and the merge table then rebuilds the pieces in "
    "a fixed order of priority. Byte-level schemes map every byte to a printable stand-in "
    "character first, while sentencepiece models replace spaces with a lower one-eighth block and "
    "fall back to raw byte tokens for anything unknown. None of this is difficult on its own, but "
    "all of it must be reproduced exactly, in the same order, with the same tie-breaking, on a "
    "device with a fraction of the memory. That is why this paragraph exists: it is long enough to "
    "exercise the cache, the buffer growth and the merge loop, it mixes short and long words, "
    "commas, semicolons and colons, and it ends without a trailing newline, which is one more "
    "detail that an exporter must get right before anyone can trust it on real user input."
)

CJK_PARAGRAPH = (
    "分词器把文字切成小块，再把每一块换成一个数字。如果手机上的分词器和服务器上的分词器对同一句话给出不同的数字，"
    "模型读到的就不是同一段文字了。所以我们需要一组覆盖各种边角情况的测试文本：中文、日文、韩文、表情符号、"
    "全角字符、组合字符，以及看起来像特殊标记但其实不是的字符串。"
)


def _zalgo(text: str) -> str:
    """Deterministic 'Zalgo' text: cycle through a fixed list of combining marks."""
    marks = ["\u0335", "\u0321", "\u0322", "\u031b", "\u0337", "\u0330", "\u0338", "\u0329",
             "\u0336", "\u0327", "\u035c", "\u0358", "\u0334", "\u0328", "\u0317", "\u0346"]
    out, k = [], 0
    for ch in text:
        out.append(ch)
        if ch != " ":
            for _ in range(3):
                out.append(marks[k % len(marks)])
                k += 1
    return "".join(out)


def _pseudo_base64(n: int) -> str:
    """Deterministic base64-looking noise of length n."""
    chunks, seed = [], b"mtok-export corpus"
    while sum(map(len, chunks)) < n:
        seed = hashlib.sha256(seed).digest()
        chunks.append(base64.b64encode(seed).decode("ascii"))
    return "".join(chunks)[:n]


SPECIAL_TOKENS = [
    ("s", "<s>"), ("s-close", "</s>"), ("unk", "<unk>"), ("pad", "<pad>"),
    ("cls", "[CLS]"), ("sep", "[SEP]"), ("mask", "[MASK]"),
    ("endoftext", "<|endoftext|>"), ("im-start", "<|im_start|>"), ("im-end", "<|im_end|>"),
    ("begin-of-text", "<|begin_of_text|>"), ("eot-id", "<|eot_id|>"),
    ("start-header-id", "<|start_header_id|>"), ("think", "<think>"), ("think-close", "</think>"),
    ("extra-id-0", "<extra_id_0>"), ("end", "<|end|>"), ("assistant", "<|assistant|>"),
]


def samples() -> list[tuple[str, list[str], str]]:
    S: list[tuple[str, list[str], str]] = []

    def add(id_: str, tags: str, text: str) -> None:
        S.append((id_, tags.split(), text))

    # --- English and other Latin-script prose -------------------------------------------------
    add("en-hello", "latin", "Hello world")
    add("en-hello-leading-space", "latin whitespace", " Hello world")
    add("en-hello-punct", "latin punctuation", "Hello, world!")
    add("en-pangram", "latin", "The quick brown fox jumps over the lazy dog.")
    add("en-sentence-shells", "latin", "She sells sea shells by the shore, but nobody buys them on Tuesdays.")
    add("en-question", "latin", "Where did you put the keys to the blue car?")
    add("en-all-caps", "latin", "THIS SENTENCE IS WRITTEN ENTIRELY IN CAPITAL LETTERS.")
    add("en-odd-case", "latin", "tHiS iS mOcKiNg CaSe, plus iPhone, eBay and McDonald.")
    add("en-camel-case", "latin code", "getHTTPResponseCode parseXMLDocument userIDList toJSON")
    add("en-snake-case", "latin code", "max_batch_size __init__ _private CONSTANT_VALUE a__b")
    add("en-multiline", "latin whitespace", "First line.\nSecond line.\nThird line.")
    add("en-short-paragraph", "latin",
        "Tokenizers are everywhere. They run before every model call, and they are rarely tested "
        "on strange input. This corpus tries to change that.")
    add("en-hyphenation", "latin punctuation", "state-of-the-art, well-known, re-enter, e-mail, X-ray")
    add("en-abbreviations", "latin punctuation", "e.g. i.e. etc. Dr. Smith vs. Mr. Jones at 5 p.m. U.S.A.")
    add("latin-accents", "latin", "naïve café résumé façade coöperate señor über Zürich Ångström")
    add("latin-german", "latin", "Äpfel, Öl und Übermut – Straße, Fußgänger, ß und ẞ.")
    add("latin-french", "latin punctuation", "L'été dernier, nous sommes allés à la plage ; c'était « génial » !")
    add("latin-spanish", "latin punctuation", "¿Dónde está la biblioteca? ¡Está allí, señorita!")
    add("latin-polish", "latin", "Zażółć gęślą jaźń.")
    add("latin-turkish-i", "latin", "İstanbul'da ılık bir gün: I ı İ i.")
    add("latin-icelandic", "latin", "Þetta er ð og þ og æ á Íslandi.")
    add("latin-titlecase-digraphs", "latin compat", "ǅ ǈ ǋ ǲ Ǆ ǆ")

    # --- Code, data formats, URLs, paths -----------------------------------------------------
    add("code-python-func", "code", "def add(a, b):\n    return a + b\n")
    add("code-python-class", "code whitespace",
        'class Cache:\n    """A tiny LRU cache."""\n\n    def __init__(self, size=128):\n'
        "        self.size = size\n        self.items = {}\n\n    def get(self, key):\n"
        "        if key in self.items:\n            return self.items[key]\n        return None\n")
    add("code-python-tabs", "code whitespace", "def f(x):\n\tif x:\n\t\treturn 1\n\treturn 0\n")
    add("code-python-comprehension", "code", "# squares\nxs = [i ** 2 for i in range(10) if i % 2]  # odd only\n")
    add("code-python-fstring", "code", 'print(f"{name!r:>10} = {value:.3f}")')
    add("code-c-main", "code whitespace",
        '#include <stdio.h>\n\nint main(void) {\n\tprintf("Hello, %s!\\n", "world");\n\treturn 0;\n}\n')
    add("code-c-pointers", "code", "int *p = &x; p->next = NULL; a[i] += b[j] << 2; if (a != b && c >= d || !e) {}")
    add("code-c-macro", "code", "#define MAX(a, b) ((a) > (b) ? (a) : (b))\n")
    add("code-c-comment", "code", "/* block\n * comment\n */\nuint8_t buf[256]; // line comment\n")
    add("code-js-arrow", "code", "const add = (a, b) => a + b;\nconsole.log(`sum: ${add(1, 2)}`);\n")
    add("code-js-async", "code whitespace",
        "async function fetchData(url) {\n  const res = await fetch(url);\n  if (!res.ok) throw new Error(res.status);\n  return res.json();\n}\n")
    add("code-js-regex", "code", r"const re = /^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$/i;")
    add("code-json-compact", "code", '{"name":"mtok","version":1,"tags":["a","b"],"nested":{"ok":true,"value":null}}')
    add("code-json-pretty", "code whitespace",
        '{\n  "model": "demo",\n  "vocab_size": 32000,\n  "special": [\n    "<s>",\n    "</s>"\n  ]\n}')
    add("code-json-escapes", "code", r'{"path": "C:\\Users\\me", "quote": "\"hi\"", "unicode": "\u00e9\n"}')
    add("code-yaml", "code whitespace",
        "server:\n  host: 0.0.0.0\n  port: 8080\n  tags:\n    - web\n    - api\n# comment\nenabled: true\nname: 'quoted: value'\n")
    add("code-shell", "code", "$ ls -la | grep '.py' && echo \"done\" > /dev/null 2>&1; export PATH=$HOME/bin:$PATH")
    add("code-sql", "code", "SELECT id, name FROM users WHERE age >= 18 AND name LIKE 'A%' ORDER BY name DESC LIMIT 10;")
    add("code-rust", "code", 'fn main() {\n    let v: Vec<u32> = (0..10).collect();\n    println!("{:?}", v);\n}\n')
    add("code-diff", "code", "--- a/file.py\n+++ b/file.py\n@@ -1,3 +1,3 @@\n-old line\n+new line\n context\n")
    add("code-mixed-indent", "code whitespace", "if (x) {\n\t    mixed();\n    \tindent();\n}\n")
    add("code-operators", "code punctuation", "a===b a!==b a<=b a>=b a&&b a||b a??b a?.b a**=2 a>>>=1 ::= -> => <=>")
    add("code-brackets", "code punctuation", "(((( )))) [[[[ ]]]] {{{{ }}}} <<<< >>>>")
    add("code-trailing-whitespace", "code whitespace", "x = 1   \ny = 2\t\nz = 3 \t \n")
    add("code-deep-indent", "code whitespace", "                if deeply_nested:\n                    return True\n")
    add("web-url-query", "web", "https://www.example.com/path/to/page?query=hello%20world&lang=en#section-2")
    add("web-url-in-sentence", "web latin", "See https://example.org/docs/v1.2/index.html for details.")
    add("web-url-ipv6", "web numbers", "http://[2001:db8::1]:8080/api/v2/items?id=42")
    add("web-url-idn", "web mixed-script", "https://münchen.example/straße?q=日本語")
    add("web-email", "web", "Contact alice.smith+tokens@example.co.uk or bob_o'neil@sub.example.org.")
    add("web-path-unix", "web", "/usr/local/lib/python3.11/site-packages/tokenizers/__init__.py")
    add("web-path-windows", "web", r"C:\Program Files\MNN\bin\mnn.exe")
    add("web-path-relative", "web", "../models/qwen2.5-0.5b/tokenizer.json ./out/tokenizer.mtok ~/.cache/huggingface/hub")
    add("web-handles", "web", "@user #hashtag $TICKER r/subreddit u/someone")

    # --- Markup ------------------------------------------------------------------------------
    add("markup-md-heading", "markup", "# Title\n\n## Subtitle\n\nSome **bold**, *italic*, `code` and ~~strike~~ text.\n")
    add("markup-md-list", "markup whitespace", "- item one\n- item two\n  - nested item\n1. first\n2. second\n")
    add("markup-md-table", "markup", "| a | b |\n|---|:-:|\n| 1 | 2 |\n")
    add("markup-md-codeblock", "markup code", "```python\nprint('hi')\n```\n")
    add("markup-md-link", "markup web", '[link text](https://example.com "title") and ![img](a.png)')
    add("markup-html", "markup",
        '<!DOCTYPE html>\n<html lang="en"><head><title>Test</title></head>'
        '<body><p class="x">Hello&nbsp;&amp;&lt;world&gt;</p></body></html>')
    add("markup-html-comment", "markup", '<!-- comment --><br/><img src="a.png" alt="">')
    add("markup-xml", "markup", '<?xml version="1.0" encoding="UTF-8"?>\n<root><item id="1"/><![CDATA[raw <data>]]></root>')
    add("markup-latex", "markup", r"$$\int_0^\infty e^{-x^2}\,dx = \frac{\sqrt{\pi}}{2}$$")

    # --- Numbers ------------------------------------------------------------------------------
    add("num-1", "numbers", "1")
    add("num-12", "numbers", "12")
    add("num-123", "numbers", "123")
    add("num-1234", "numbers", "1234")
    add("num-12345", "numbers", "12345")
    add("num-1234567890", "numbers", "1234567890")
    add("num-long-run", "numbers long", "1234567890" * 5)
    add("num-growing-sevens", "numbers", "7 77 777 7777 77777 777777 7777777 77777777")
    add("num-decimals", "numbers", "3.14159 0.5 .5 5. 1e10 6.022e23 -2.5E-3")
    add("num-dotted", "numbers", "1.2.3 1..2 1...2 v1.2.3-rc.4")
    add("num-thousands", "numbers", "1,000,000 and 1.000.000 and 1 000 000 and 10,00,000")
    add("num-money", "numbers", "$1,234.56 €99,99 ¥10000 £5 ₹1,00,000 ₿0.001")
    add("num-dates", "numbers", "2024-01-31 31/01/2024 01/31/24 Jan 31, 2024 and 2024年1月31日")
    add("num-times", "numbers", "12:30 23:59:59.999 9am 10:00 PM 2024-01-31T12:34:56Z")
    add("num-phone", "numbers", "+1 (555) 123-4567, +44 20 7946 0958, 555.123.4567")
    add("num-hex", "numbers", "0x1F 0xDEADBEEF 0Xff #ff8800 0b1010 0o755 U+1F600")
    add("num-percent", "numbers", "50% 99.9% -3% +7 ±2 1/2 3:4")
    add("num-ordinals", "numbers", "1st 2nd 3rd 4th 21st 100th")
    add("num-alnum", "numbers", "abc123def 4x4 3D mp3 h264 CO2 x86_64")
    add("num-signs", "numbers", "-1 -0 +0 \u22125")
    add("num-leading-zeros", "numbers", "007 0001 000000")
    add("num-versions", "numbers", "Python 3.11.4, CUDA 12.1, GPT-4o, Llama-3.1-8B")
    add("num-arabic-indic", "numbers rtl", "٠١٢٣٤٥٦٧٨٩ و ۱۲۳")
    add("num-devanagari", "numbers indic", "०१२३४५६७८९")

    # --- Punctuation and contractions ---------------------------------------------------------
    add("punct-ellipsis", "punctuation", "Wait... what...? Hmm....")
    add("punct-dashes", "punctuation", "--- -- - – — ― a—b a–b")
    add("punct-bangs", "punctuation", "Wow!!! Really??? No!?!? Yes?!")
    add("punct-quotes", "punctuation", "\"double\" 'single' “curly double” ‘curly single’ «guillemets» „low“")
    add("punct-runs", "punctuation", "......!!!!!!??????,,,,;;;;::::")
    add("punct-backticks", "punctuation", "'''''' ``````` \"\"\"\" ~~~~ ^^^^ ____ ****")
    add("punct-ascii-symbols", "punctuation", "@#$%^&*()_+-=[]{}|\\;:'\",.<>/?`~")
    add("punct-typographic", "punctuation", "• ‣ ◦ · … ‰ † ‡ § ¶ © ® ™")
    add("punct-math", "punctuation compat", "∀x ∈ ℝ: x² ≥ 0 ∧ ∑ᵢ aᵢ ≤ ∞ ≠ ≈ √2 ∫ ∂")
    add("punct-arrows", "punctuation", "← → ↑ ↓ ⇒ ⇔ ➜")
    add("punct-box-drawing", "punctuation", "┌──┐\n│hi│\n└──┘")
    add("contr-basic", "contractions latin", "It's, don't, they're, we've, I'm, you'll, he'd.")
    add("contr-upper", "contractions latin", "IT'S, DON'T, THEY'RE, WE'VE, I'M, YOU'LL, HE'D, JOHN'S")
    add("contr-odd-case", "contractions latin", "It'S dOn'T We'Ve a'lL I'M sHe'D")
    add("contr-curly", "contractions latin", "It’s, don’t, they’re, we’ve, I’m, you’ll, he’d")
    add("contr-possessive", "contractions latin", "James's car, the dogs' bowls, Charles' book")
    add("contr-quoted", "contractions punctuation", "'hello' and 'world's' and ''double'' and 'tis")
    add("contr-bare-suffixes", "contractions", "'s 't 're 've 'm 'll 'd 'S 'T 'RE")
    add("contr-no-space", "contractions", "x's'y't'z're'")
    add("contr-numbers", "contractions numbers", "the '90s and rock 'n' roll, 5'11\"")
    add("contr-leading-quote-word", "contractions", "' era 'em 'cause")

    # --- CJK and Japanese ---------------------------------------------------------------------
    add("zh-hans-sentence", "cjk", "今天天气很好，我们去公园散步吧。")
    add("zh-hant-sentence", "cjk", "這是一個繁體中文的句子，包含「引號」與標點。")
    add("zh-latin-digits", "cjk mixed-script", "我用Python写了3个脚本，每个100行。")
    add("zh-paragraph", "cjk", CJK_PARAGRAPH)
    add("zh-punctuation", "cjk punctuation", "你好！你好吗？很好，谢谢。……——《书名》")
    add("zh-supplementary", "cjk rare", "𠀀𠀁𪚥𰻞")
    add("zh-numerals", "cjk numbers", "一二三四五六七八九十 百 千 万 亿 〇")
    add("ja-kana-kanji", "cjk japanese", "私は東京で寿司を食べました。")
    add("ja-hiragana", "cjk japanese", "ひらがなだけのぶんしょうです")
    add("ja-katakana", "cjk japanese", "カタカナ コンピューター ソフトウェア")
    add("ja-halfwidth-katakana", "cjk japanese compat", "ﾊﾝｶｸｶﾀｶﾅ ｺﾝﾋﾟｭｰﾀｰ ｶﾞｷﾞｸﾞ")
    add("ja-small-kana", "cjk japanese", "ちょっと待って、キャッシュがっ")
    add("ja-iteration-marks", "cjk japanese", "人々 時々 ゝゞヽヾ〃")
    add("ja-long-vowel", "cjk japanese", "ラーメン～ーー")
    add("ja-mixed-latin", "cjk japanese mixed-script", "Unicodeの正規化(NFKC)はトークナイザーで重要です。")
    add("ja-fullwidth-punct", "cjk japanese", "（全角）【括弧】、。・「」『』")
    add("ja-combining-voiced", "cjk japanese combining", "か\u3099 は\u309a カ\u3099")

    # --- Korean -------------------------------------------------------------------------------
    add("ko-sentence", "korean", "안녕하세요, 만나서 반갑습니다.")
    add("ko-mixed", "korean mixed-script", "저는 AI 모델을 2024년에 배웠어요.")
    add("ko-jamo-word", "korean combining", NFD("한국어"))
    add("ko-jamo-sentence", "korean combining", NFD("안녕하세요 세계, 반갑습니다!"))
    add("ko-jamo-mixed-forms", "korean combining", "한글 " + NFD("한글") + " 한" + NFD("글"))
    add("ko-jamo-leading-only", "korean combining", "\u1100\u1100\u1161 \u1112\u1161\u11ab\u11ab")
    add("ko-old-hangul", "korean combining", "\u1100\u119e \u1109\u119e\u11af")
    add("ko-compat-jamo", "korean compat", "ㅋㅋㅋ ㅎㅎ ㅠㅠ ㄱㄴㄷ")
    add("ko-halfwidth", "korean compat", "\uffa1\uffa4\uffc2")

    # --- RTL scripts -------------------------------------------------------------------------
    add("ar-sentence", "rtl", "مرحبا بالعالم، كيف حالك؟")
    add("ar-harakat", "rtl combining", "كَتَبَ الطَّالِبُ الدَّرْسَ.")
    add("ar-harakat-reordered", "rtl combining", "\u0637\u0651\u064e \u0637\u064e\u0651")
    add("ar-digits-mixed", "rtl numbers", "العدد 123 و ١٢٣ و 4.5")
    add("ar-tatweel", "rtl", "مـــرحـــبا")
    add("ar-presentation-forms", "rtl compat", "ﻻ ﷲ ﷺ ﻣﺮﺣﺒﺎ")
    add("he-sentence", "rtl", "שלום עולם, מה שלומך?")
    add("he-niqqud", "rtl combining", "שָׁלוֹם עוֹלָם")
    add("rtl-in-ltr", "rtl mixed-script latin", "The word שלום means peace, and so does سلام.")
    add("fa-zwnj", "rtl zero-width", "زبان فارسی با نیم\u200cفاصله می\u200cنویسد")

    # --- Indic -------------------------------------------------------------------------------
    add("hi-sentence", "indic", "नमस्ते, आप कैसे हैं?")
    add("hi-conjuncts", "indic", "क्षत्रिय ज्ञान श्रम द्वार स्त्री")
    add("hi-nukta-forms", "indic combining", "\u0958 \u0915\u093c \u095e \u092b\u093c")
    add("hi-virama-joiners", "indic zero-width", "क्\u200dष क्\u200cष")
    add("hi-danda", "indic punctuation", "यह पहला वाक्य है। यह दूसरा है॥")
    add("bn-sentence", "indic", "আমি বাংলায় গান গাই।")
    add("ta-sentence", "indic", "வணக்கம் உலகம்")

    # --- Southeast Asian, Vietnamese, Cyrillic, Greek ---------------------------------------
    add("th-sentence", "sea", "สวัสดีครับ ยินดีที่ได้รู้จัก")
    add("th-sara-am", "sea compat", "น้ำ กำ \u0e01\u0e4d\u0e32")
    add("th-digits", "sea numbers", "๑๒๓๔๕ ราคา 100 บาท")
    add("km-sentence", "sea", "ភាសាខ្មែរ ស្រស់ស្អាត")
    add("lo-sentence", "sea", "ສະບາຍດີ")
    add("my-sentence", "sea", "မင်္ဂလာပါ")
    add("vi-nfc", "vietnamese latin", NFC("Tiếng Việt có nhiều dấu thanh: à, á, ả, ã, ạ."))
    add("vi-nfd", "vietnamese latin combining", NFD("Tiếng Việt có nhiều dấu thanh: à, á, ả, ã, ạ."))
    add("vi-sentence-nfc", "vietnamese latin", NFC("Người ta nói rằng học tiếng Việt rất khó."))
    add("vi-sentence-nfd", "vietnamese latin combining", NFD("Người ta nói rằng học tiếng Việt rất khó."))
    add("vi-mixed-forms", "vietnamese latin combining", "ệ " + NFD("ệ") + " Đường " + NFD("Đường"))
    add("vi-noncanonical-order", "vietnamese latin combining", "e\u0302\u0323 vs e\u0323\u0302")
    add("ru-sentence", "cyrillic", "Привет, мир! Как дела?")
    add("bg-sentence", "cyrillic", "Това е изречение на български език.")
    add("uk-letters", "cyrillic", "Ґанок, їжак, є, і — українські літери.")
    add("ru-caps", "cyrillic", "МОСКВА И САНКТ-ПЕТЕРБУРГ")
    add("ru-yo-forms", "cyrillic combining", "ёлка \u0435\u0308лка Й \u0418\u0306")
    add("cyrillic-homoglyphs", "cyrillic latin mixed-script", "\u0420ython with Cyrillic \u0420, Latin P; \u0410pple/Apple")
    add("el-sentence", "greek", "Γειά σου κόσμε! Τι κάνεις;")
    add("el-question-mark", "greek compat", "Τι κάνεις\u037e")
    add("el-polytonic", "greek", "Ἀθῆναι, ἡ πόλις τῆς Ἀθηνᾶς")
    add("el-final-sigma", "greek", "ΟΔΟΣ οδός σσς ς ΣΣ")
    add("el-tonos-oxia", "greek compat", "\u03ac \u1f71 \u03b1\u0301")
    add("el-letters", "greek compat", "α β γ δ ε π Σ Ω µ ϐ ϑ ϕ")

    # --- Mixed scripts ------------------------------------------------------------------------
    add("mixed-greetings", "mixed-script", "Hello 世界 مرحبا שלום नमस्ते Привет 🌍")
    add("mixed-cafe", "mixed-script latin", "Das Café in 東京 hat 5 ☕ und Wi\u2011Fi.")
    add("mixed-record", "mixed-script", "ID: 用户_42, 이름: Ким, status=✓")
    add("mixed-code-comments", "mixed-script code cjk", "# 计算总和\ntotal = 0  # 初始化\nfor x in 数据:\n    total += x\n")
    add("mixed-no-spaces", "mixed-script", "abcабвαβγ一二三あいう가나다")

    # --- Emoji --------------------------------------------------------------------------------
    add("emoji-basic", "emoji", "😀😃😄 🎉🚀")
    add("emoji-in-text", "emoji latin", "I love pizza 🍕 and coffee ☕!")
    add("emoji-skin-tones", "emoji", "👋 👋🏻 👋🏼 👋🏽 👋🏾 👋🏿")
    add("emoji-lone-modifier", "emoji", "🏽")
    add("emoji-zwj-family", "emoji zero-width", "👨\u200d👩\u200d👧\u200d👦")
    add("emoji-zwj-sequences", "emoji zero-width",
        "👩🏽\u200d💻 🧑\u200d🚀 🏳\ufe0f\u200d🌈 ❤\ufe0f\u200d🔥 🐻\u200d❄\ufe0f 😶\u200d🌫\ufe0f")
    add("emoji-flags", "emoji", "🇺🇸 🇯🇵 🇩🇪 🇧🇷 🇪🇺")
    add("emoji-flags-adjacent", "emoji", "🇺🇸🇯🇵🇩🇪")
    add("emoji-regional-odd", "emoji", "🇦 🇦🇧🇨")
    add("emoji-subdivision-flag", "emoji",
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f")
    add("emoji-keycaps", "emoji", "1\ufe0f\u20e3 2\ufe0f\u20e3 #\ufe0f\u20e3 *\ufe0f\u20e3 0\u20e3")
    add("emoji-variation-selectors", "emoji", "☺ ☺\ufe0f ☺\ufe0e ❤ ❤\ufe0f ✔\ufe0e ✔\ufe0f")
    add("emoji-repeated", "emoji", "😂" * 8)
    add("emoji-glued", "emoji", "abc😀def🚀123")
    add("emoji-old-symbols", "emoji", "☀☁☂☃★☆♠♣♥♦♪♫")
    add("emoji-in-sentence-2", "emoji latin", "built with 🦀 and 🐍, shipped in 📦")
    add("emoji-recent", "emoji", "🫠 🫨 🩷 🪿")

    # --- Combining marks ----------------------------------------------------------------------
    add("comb-e-acute", "combining", "e\u0301")
    add("comb-cafe-forms", "combining latin", "cafe\u0301 vs caf\u00e9")
    add("comb-stacked", "combining", "a\u0301\u0302\u0303\u0304 o\u0308\u0304")
    add("comb-zalgo", "combining", _zalgo("Zalgo text"))
    add("comb-leading-mark", "combining", "\u0301abc")
    add("comb-after-space", "combining", "a \u0308b")
    add("comb-grapheme-joiner", "combining", "a\u034fb")
    add("comb-enclosing", "combining", "A\u20dd B\u20de 1\u20e3")
    add("comb-reorder", "combining", "a\u0301\u0323 a\u0323\u0301")
    add("comb-long-run", "combining long", "o" + "\u0300" * 30)
    add("comb-nfd-french", "combining latin", NFD("Crème brûlée à la française"))
    add("comb-double-diacritic", "combining", "o\u0361o t\u035ch")

    # --- Compatibility characters ------------------------------------------------------------
    add("compat-ligatures", "compat", "ﬁnance ﬂow ﬀ ﬃ ﬄ ﬆ")
    add("compat-fullwidth-latin", "compat spaces", "ＡＢＣ\u3000ａｂｃ\u3000１２３")
    add("compat-fullwidth-punct", "compat punctuation", "！？＃＄％＆（）＊＋，－．／：；＜＝＞＠［＼］＾＿｀｛｜｝～")
    add("compat-fractions", "compat numbers", "½ ⅓ ¼ ¾ ⅞ ⅐ 4½")
    add("compat-super-subscripts", "compat", "x² y³ 10⁻⁶ H₂O CO₂ ⁿ")
    add("compat-squared", "compat", "㎞ ㎏ ㎡ ㏄ ㍻ ㌔")
    add("compat-roman", "compat", "Ⅻ Ⅰ Ⅱ Ⅲ Ⅳ ⅻ Ⅿ")
    add("compat-circled", "compat", "① ② ⑳ ⓐ Ⓐ ㉑ ㊿")
    add("compat-parenthesized", "compat", "⑴ ⒜ ㈠ ㈱")
    add("compat-angstrom", "compat", "\u212b")
    add("compat-angstrom-forms", "compat combining", "\u212b \u00c5 A\u030a")
    add("compat-kelvin", "compat", "300 \u212a")
    add("compat-ohm", "compat", "10 k\u2126")
    add("compat-ellipsis", "compat punctuation", "…")
    add("compat-letterlike", "compat", "ℌ ℍ ℕ ℝ ℤ ℂ 𝐀𝐁𝐂 𝔸𝔹 𝓐 № ™ ℠ ℡")
    add("compat-old-ligatures", "compat latin", "ſt ﬅ Ĳ ĳ ŉ")
    add("compat-cjk-ideographs", "compat cjk", "\uf900 \uf901 \uf902")
    add("compat-kangxi", "compat cjk", "⼀ ⼆ ⼈")
    add("compat-micro", "compat", "5 µm")
    add("compat-ideographic-digits", "compat numbers", "１２３４５６７８９０")

    # --- Unicode spaces -----------------------------------------------------------------------
    add("spaces-nbsp", "spaces", "100\u00a0km and 5\u00a0%")
    add("spaces-nbsp-alone", "spaces", "\u00a0")
    add("spaces-nbsp-run", "spaces", "\u00a0\u00a0\u00a0")
    add("spaces-u2000-block", "spaces", "".join(f"{chr(0x61 + i)}{chr(0x2000 + i)}" for i in range(11)) + "z")
    add("spaces-ideographic", "spaces cjk japanese", "日本\u3000語\u3000\u3000テキスト")
    add("spaces-ideographic-alone", "spaces", "\u3000")
    add("spaces-narrow-nbsp", "spaces", "10\u202fkm « bonjour\u202f»")
    add("spaces-math-ogham", "spaces", "a\u205fb c\u1680d")
    add("spaces-figure", "spaces numbers", "1\u20070\u20070")
    add("spaces-mixed-run", "spaces whitespace", " \u00a0\u2003\u3000\t ")

    # --- ASCII whitespace, newlines -----------------------------------------------------------
    add("ws-space", "whitespace", " ")
    add("ws-2-spaces", "whitespace", "  ")
    add("ws-3-spaces", "whitespace", "   ")
    add("ws-4-spaces", "whitespace", "    ")
    add("ws-8-spaces", "whitespace", " " * 8)
    add("ws-tab", "whitespace", "\t")
    add("ws-3-tabs", "whitespace", "\t\t\t")
    add("ws-mixed-tabs-spaces", "whitespace", " \t \t  \t")
    add("ws-newline", "whitespace", "\n")
    add("ws-2-newlines", "whitespace", "\n\n")
    add("ws-5-newlines", "whitespace", "\n" * 5)
    add("ws-tab-newline", "whitespace", "\t\n")
    add("ws-crlf-lines", "whitespace", "line one\r\nline two\r\n")
    add("ws-crlf", "whitespace", "\r\n")
    add("ws-crlf-run", "whitespace", "\r\n\r\n\r\n")
    add("ws-lone-cr", "whitespace", "carriage\rreturn")
    add("ws-cr", "whitespace", "\r")
    add("ws-mixed-newlines", "whitespace", "a\nb\r\nc\rd\n\re")
    add("ws-leading", "whitespace", "   leading")
    add("ws-trailing", "whitespace", "trailing   ")
    add("ws-both-ends", "whitespace", "  both  ")
    add("ws-inner-runs", "whitespace", "a  b   c    d        e")
    add("ws-space-newline", "whitespace", " \n \n")
    add("ws-newline-indent", "whitespace", "\n hello\n  world")
    add("ws-indented-lines", "whitespace", "    four\n        eight\n\ttab\n")
    add("ws-trailing-newline", "whitespace latin", "Hello world\n")
    add("ws-staircase", "whitespace", "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n")
    add("ws-vt-ff", "whitespace control", "a\x0bb\x0cc")
    add("ws-line-para-separators", "whitespace", "line\u2028sep\u2029para")
    add("ws-spaces-before-word", "whitespace", "       Hello")

    # --- Control characters -------------------------------------------------------------------
    add("ctrl-soh", "control", "\x01")
    add("ctrl-bell", "control", "ding\x07dong")
    add("ctrl-ansi-color", "control", "\x1b[31mred\x1b[0m normal \x1b[1;32mgreen bold\x1b[0m")
    add("ctrl-ansi-cursor", "control", "\x1b[2J\x1b[H\x1b]0;title\x07")
    add("ctrl-escape", "control", "\x1b")
    add("ctrl-del", "control", "abc\x7fdef")
    add("ctrl-nel", "control whitespace", "next\x85line")
    add("ctrl-nul", "control", "a\x00b")
    add("ctrl-all-c0", "control", "".join(chr(i) for i in range(1, 32)))
    add("ctrl-c1", "control", "\x80\x81\x9f")
    add("ctrl-backspace", "control", "abc\x08\x08xy")
    add("ctrl-sub", "control", "\x1a")

    # --- Zero-width, format and bidi characters -----------------------------------------------
    add("zw-zwsp-words", "zero-width", "zero\u200bwidth\u200bspace")
    add("zw-zwsp", "zero-width", "\u200b")
    add("zw-zwnj", "zero-width", "\u200c")
    add("zw-zwnj-word", "zero-width latin", "Auf\u200clage")
    add("zw-zwj", "zero-width", "\u200d")
    add("zw-zwj-letters", "zero-width", "a\u200db")
    add("zw-word-joiner", "zero-width", "word\u2060joiner")
    add("zw-word-joiner-alone", "zero-width", "\u2060")
    add("zw-bom-start", "zero-width", "\ufeffHello")
    add("zw-bom", "zero-width", "\ufeff")
    add("zw-bom-middle", "zero-width", "Hel\ufefflo")
    add("zw-soft-hyphen", "zero-width", "hy\u00adphen\u00adation")
    add("zw-invisible-operators", "zero-width", "a\u2062b\u2063c\u2064d")
    add("bidi-lrm", "bidi", "abc\u200edef")
    add("bidi-rlm", "bidi rtl", "\u200fשלום")
    add("bidi-rlo", "bidi", "invoice\u202efdp.exe")
    add("bidi-embeddings", "bidi", "\u202aLTR\u202c \u202bRTL\u202c")
    add("bidi-isolates", "bidi", "\u2066a\u2069 \u2067b\u2069 \u2068c\u2069")
    add("bidi-alm", "bidi rtl", "\u061c")

    # --- Special-token text -------------------------------------------------------------------
    for slug, tok in SPECIAL_TOKENS:
        add(f"special-{slug}-alone", "special", tok)
        add(f"special-{slug}-spaced", "special", f"Hello {tok} world")
        add(f"special-{slug}-unspaced", "special", f"Hello{tok}world")
        add(f"special-{slug}-twice", "special", tok + tok)
    add("special-chatml", "special", "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n")
    add("special-llama3-header", "special", "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>")
    add("special-bert-pair", "special", "[CLS] first sentence [SEP] second sentence [SEP]")
    add("special-think-block", "special", "<think>\nLet me reason.\n</think>\n\nThe answer is 4.")
    add("special-wrong-case", "special", "[cls] [Sep] <S> <|IM_START|> <UNK>")
    add("special-spaced-inside", "special", "< s > <| im_start |> [ CLS ] < / s >")
    add("special-escaped", "special markup", "\\<s\\> &lt;s&gt; &lt;|endoftext|&gt;")
    add("special-nested", "special", "<<s>> [[CLS]] <|<|im_end|>|>")
    add("special-adjacent-mixed", "special", "</s><s>[SEP][CLS]<|im_end|><|im_start|>")
    add("special-newlines-around", "special whitespace", "\n<|endoftext|>\n")
    add("special-spaces-around", "special whitespace", "   <s>   ")
    add("special-extra-ids", "special", "<extra_id_0> <extra_id_1> <extra_id_99> <extra_id_100>")
    add("special-emoji-around", "special emoji", "🚀<|endoftext|>🚀")
    add("special-cjk-around", "special cjk", "你好<|im_end|>世界")
    add("special-other-families", "special", "[INST] hi [/INST] <|user|> <|system|> <start_of_turn>model<end_of_turn> <bos><eos>")
    add("partial-im-prefix", "partial-special", "<|im_")
    add("partial-im-start-no-close", "partial-special", "<|im_start")
    add("partial-im-start-one-bar", "partial-special", "<|im_start|")
    add("partial-im-start-suffix", "partial-special", "im_start|>")
    add("partial-s-open", "partial-special", "<s")
    add("partial-s-close-open", "partial-special", "</s")
    add("partial-s-space", "partial-special", "<s >")
    add("partial-cls-prefix", "partial-special", "[CL")
    add("partial-cls-no-close", "partial-special", "[CLS")
    add("partial-cls-suffix", "partial-special", "CLS]")
    add("partial-endoftext-no-gt", "partial-special", "<|endoftext|")
    add("partial-endoftext-no-lt", "partial-special", "|endoftext|>")
    add("partial-endoftext-no-close", "partial-special", "<|endoftext")
    add("partial-bar-open", "partial-special", "<|")
    add("partial-bar-close", "partial-special", "|>")
    add("partial-eot", "partial-special", "<|eot_")
    add("partial-think-open", "partial-special", "<think")
    add("partial-think-close", "partial-special", "</think")
    add("partial-extra-id", "partial-special", "<extra_id_")
    add("partial-begin-of-text", "partial-special", "<|begin_of_text")
    add("partial-mid-sentence", "partial-special", "Hello <|im_ world and [MASK and </s")
    add("partial-then-full", "partial-special special", "<|im_<|im_start|>")
    add("partial-glued", "partial-special", "text<|endoftext|more")

    # --- Byte-like and vocabulary-marker text -------------------------------------------------
    add("byte-hex-token", "byte-like", "<0x41>")
    add("byte-hex-run", "byte-like", "<0x0A><0xE4><0xB8><0x80>")
    add("byte-hex-in-text", "byte-like", "<0x41> is the letter A")
    add("byte-hex-malformed", "byte-like", "<0xZZ> <0x100> <0x> <0x4>")
    add("byte-metaspace", "byte-like", "\u2581")
    add("byte-metaspace-words", "byte-like", "\u2581hello\u2581world")
    add("byte-metaspace-run", "byte-like", "\u2581\u2581\u2581 \u2581 ")
    add("byte-gpt2-g", "byte-like", "Ġ")
    add("byte-gpt2-c", "byte-like", "Ċ")
    add("byte-gpt2-words", "byte-like", "ĠhelloĠworldĊ")
    add("byte-gpt2-map-chars", "byte-like", "ĉ Ġ Ċ ĳ ł Ń ¡ ÿ")
    add("byte-wordpiece", "byte-like", "##ing")
    add("byte-wordpiece-words", "byte-like", "play ##ing ##s ## #")

    # --- Rare code points ---------------------------------------------------------------------
    add("rare-max-codepoint", "rare", "\U0010ffff")
    add("rare-plane16-pua", "rare", "a\U0010fffdb")
    add("rare-bmp-pua", "rare", "\ue000\uf8ff")
    add("rare-plane15-pua", "rare", "\U000f0000")
    add("rare-replacement", "rare", "\ufffd")
    add("rare-replacement-in-text", "rare", "broken \ufffd\ufffd text")
    add("rare-fffe", "rare", "\ufffe")
    add("rare-ffff", "rare", "x\uffffy")
    add("rare-fdd0", "rare", "\ufdd0")
    add("rare-plane1-scripts", "rare", "𝄞 𓀀 𐍈")
    add("rare-unassigned", "rare", "\u0378")
    add("rare-tag-chars", "rare", "\U000e0041\U000e0042")
    add("rare-ideographic-vs", "rare cjk", "葛\U000e0100")

    # --- Long ---------------------------------------------------------------------------------
    add("long-word-english", "long latin", "Pneumonoultramicroscopicsilicovolcanoconiosis")
    add("long-word-german", "long latin", "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft")
    add("long-repeat-a", "long", "a" * 300)
    add("long-repeat-word", "long latin", "token " * 100)
    add("long-no-space-mixed", "long mixed-script", "x" * 50 + "1" * 50 + "あ" * 50)
    add("long-paragraph", "long latin", PARAGRAPH)
    add("long-base64", "long", _pseudo_base64(400))
    add("long-url", "long web",
        "https://example.com/search?" + "&".join(f"param{i}=value{i}" for i in range(40)))
    add("long-digits", "long numbers", "0123456789" * 20)
    add("long-spaces", "long whitespace", " " * 100)
    add("long-newlines", "long whitespace", "\n" * 50)
    add("long-cjk", "long cjk", CJK_PARAGRAPH * 3)

    # --- Empty and single characters ---------------------------------------------------------
    add("empty", "empty", "")
    for slug, ch in [("a", "a"), ("upper-a", "A"), ("digit-0", "0"), ("han", "中"), ("hiragana", "あ"),
                     ("hangul", "한"), ("arabic", "ب"), ("hebrew", "א"), ("devanagari", "क"),
                     ("thai", "ก"), ("cyrillic", "Ж"), ("greek", "Ω"), ("e-acute", "é"),
                     ("emoji", "😀"), ("period", "."), ("backslash", "\\"), ("quote", '"'),
                     ("apostrophe", "'")]:
        add(f"char-{slug}", "single-char", ch)
    add("char-lone-combining", "single-char combining", "\u0301")
    return S


# ---------------------------------------------------------------------------------------------
# Chats
# ---------------------------------------------------------------------------------------------

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}


def chats() -> list[dict]:
    U = lambda c: {"role": "user", "content": c}  # noqa: E731
    A = lambda c: {"role": "assistant", "content": c}  # noqa: E731
    SYS = lambda c: {"role": "system", "content": c}  # noqa: E731
    C: list[dict] = []

    def add(id_, tags, messages, gen, tools=None):
        d = {"id": id_, "tags": tags.split(), "messages": messages, "add_generation_prompt": gen}
        if tools is not None:
            d["tools"] = tools
        C.append(d)

    add("single-user", "single-turn", [U("Hello! What can you do?")], True)
    add("single-user-no-prompt", "single-turn", [U("Summarize this in one line.")], False)
    add("system-user", "system single-turn",
        [SYS("You are a concise assistant."), U("What is the capital of France?")], True)
    add("multi-turn", "multi-turn",
        [U("Hi, who are you?"), A("I am a helpful assistant."), U("Tell me a joke.")], True)
    add("assistant-last", "multi-turn assistant-last",
        [U("What is 2 + 2?"), A("2 + 2 = 4.")], False)
    add("system-multi-turn", "system multi-turn",
        [SYS("Answer in French."), U("Good morning"), A("Bonjour !"), U("How are you?"),
         A("Je vais bien, merci."), U("And the weather?")], True)
    add("empty-user", "empty single-turn", [U("")], True)
    add("empty-system", "empty system", [SYS(""), U("Hi")], True)
    add("empty-assistant", "empty multi-turn assistant-last", [U("Say nothing."), A("")], False)
    add("multilingual", "multilingual multi-turn",
        [U("你好，请用日语回答。"), A("こんにちは！何をお手伝いしましょうか？"),
         U("مرحبا! 안녕하세요. Привет! नमस्ते")], True)
    add("special-text", "special single-turn",
        [U("Please explain what <|im_end|>, <s>, </s>, [INST], <|eot_id|> and <think> mean.")], True)
    add("special-text-assistant", "special multi-turn assistant-last",
        [U("Print an end token."), A("Here it is: <|endoftext|> and <|im_start|>assistant")], False)
    add("long-content", "long single-turn", [U(PARAGRAPH + "\n\n" + PARAGRAPH)], True)
    add("whitespace-content", "whitespace single-turn", [U("  \n  leading and trailing  \n\n\t")], True)
    add("emoji-combining", "emoji multilingual single-turn",
        [U("👨\u200d👩\u200d👧 café vs cafe\u0301 and " + NFD("Tiếng Việt"))], True)
    add("code-content", "code multi-turn",
        [U("Fix this:\n```python\ndef f(x):\n\treturn x +\n```"),
         A("```python\ndef f(x):\n    return x + 1\n```"), U("Thanks!")], True)
    add("reasoning-history", "reasoning multi-turn",
        [U("What is 3 * 7?"), A("<think>\n3 times 7 is 21.\n</think>\n\n21"), U("And 3 * 8?")], True)
    add("tools-available", "tools system single-turn",
        [SYS("You can call tools."), U("What's the weather in Paris?")], True, tools=[WEATHER_TOOL])
    add("tool-call-roundtrip", "tools tool-calls multi-turn",
        [U("What's the weather in Paris?"),
         {"role": "assistant", "content": "",
          "tool_calls": [{"id": "call00001", "type": "function",
                          "function": {"name": "get_weather",
                                       "arguments": {"city": "Paris", "unit": "celsius"}}}]},
         {"role": "tool", "tool_call_id": "call00001", "name": "get_weather",
          "content": '{"temperature": 18, "condition": "cloudy"}'}],
        True, tools=[WEATHER_TOOL])
    return C


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

_ESCAPE_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn", "Cs"}
_ESCAPE_RANGES = [(0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF),
                  (0xFE20, 0xFE2F), (0x1100, 0x11FF), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF),
                  (0x3099, 0x309A)]


def _needs_escape(ch: str) -> bool:
    if ch == " ":
        return False
    cp = ord(ch)
    return (unicodedata.category(ch) in _ESCAPE_CATEGORIES
            or any(lo <= cp <= hi for lo, hi in _ESCAPE_RANGES)
            or unicodedata.normalize("NFC", ch) != ch)


def _u(ch: str) -> str:
    cp = ord(ch)
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    cp -= 0x10000
    return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"


def _dump_str(s: str) -> str:
    # In a string that is not NFC, canonical order matters: escape every combining mark too.
    fragile = unicodedata.normalize("NFC", s) != s
    raw = json.dumps(s, ensure_ascii=False)
    return "".join(_u(c) if _needs_escape(c) or (fragile and unicodedata.category(c)[0] == "M") else c
                   for c in raw)


def dump_line(obj) -> str:
    """json.dumps(obj, ensure_ascii=False) with invisible/fragile characters \\u-escaped."""
    if isinstance(obj, str):
        return _dump_str(obj)
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{_dump_str(k)}: {dump_line(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ", ".join(dump_line(v) for v in obj) + "]"
    return json.dumps(obj)


NEWLINE = b"\n"


SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def render() -> dict[Path, bytes]:
    out_samples, seen_ids, seen_texts = [], set(), {}
    for id_, tags, text in samples():
        assert SLUG.match(id_), id_
        assert id_ not in seen_ids, f"duplicate id {id_}"
        assert text not in seen_texts, f"{id_} duplicates the text of {seen_texts.get(text)}"
        unknown = set(tags) - set(TAGS)
        assert not unknown, f"{id_}: unknown tags {unknown}"
        seen_ids.add(id_)
        seen_texts[text] = id_
        out_samples.append(dump_line({"id": id_, "tags": tags, "text": text}))
    out_chats, seen_ids = [], set()
    for chat in chats():
        assert SLUG.match(chat["id"]) and chat["id"] not in seen_ids, chat["id"]
        seen_ids.add(chat["id"])
        unknown = set(chat["tags"]) - set(CHAT_TAGS)
        assert not unknown, f"{chat['id']}: unknown tags {unknown}"
        out_chats.append(dump_line(chat))
    return {DATA / "corpus.jsonl": ("\n".join(out_samples) + "\n").encode("utf-8"),
            DATA / "chats.jsonl": ("\n".join(out_chats) + "\n").encode("utf-8")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on difference")
    args = ap.parse_args(argv)
    stale = []
    for path, data in render().items():
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"wrote {path.relative_to(ROOT)} ({data.count(NEWLINE)} lines)")
    for path in stale:
        print(f"stale: {path.relative_to(ROOT)} (rerun scripts/make_corpus.py)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
