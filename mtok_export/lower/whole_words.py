"""`ignore_merges` in its exact MNN form: a pre-token that is a vocabulary word the merges do not
rebuild still becomes that one token (HF BPE looks the whole pre-token up before merging; MNN's
runtime always merges pair by pair, spec 2.5).

The runtime has no whole-word lookup, and merges alone cannot make one: a merge sees two adjacent
tokens, never where the pre-token ends, so any merge path that rebuilds a word also fires where the
word's pieces stand inside a longer pre-token (`ĠViá»ĩt` = ĠVi + á»ĩ + t is three tokens inside
`ĠViá»ĩtnam`'s pieces as well), and no id can drop a character from the text it stands for.  Three
things the runtime does do make one (MNN 3.6.1, TC = tokenizer.cpp):

1. the pre-token is known whole after the pre-tokenizer: a `Split` with `Removed` behaviour runs its
   regex (std::wregex, which has `^`, `$` and lookahead) on each pre-token by itself, and a
   `Metaspace` with a prefix puts its replacement before each pre-token (TC MetaspacePreTokenizer);
2. BPE merges are keyed by ids and produce the token whose text is the two texts joined, looked up
   by text (TC BPEModel::tokenize), so tokens no input can spell (ids past the vocabulary) can carry
   a chain of merges no real pre-token starts;
3. the vocab table is read entry by entry into `id_to_token[id]` and a sorted lookup table
   (TC PipelineTokenizer::load): a second text with an existing id (an alias) looks that id up,
   while the id keeps the text read last as its own.

So two steps end the pre-tokenizer: `Metaspace(A B)` puts two marks before every pre-token, and
`Split(^A B(?!(?:w1|w2|...)$), Removed)` takes them off again unless the rest is exactly one of the
words the merges miss.  Such a word reaches the model as `A B w`; the vocabulary's merges make
`A B p1 .. pk` of it (the marks merge with nothing), then merges ranked after all the source's
build `B p1`, `B p1 p2`, ..., `B w` (new ids, which only `B` starts), and last `A` + `B w` is the
alias `A B w` of `w`'s id.  Every other pre-token reaches the model as it was, and no merge of
those pairs can fire in it: the marks are characters no ByteLevel pre-token holds.  The alias
mark `A` (`mtok.constants.ALIAS_MARK`) sorts before every ByteLevel text, so the runtime keeps each
id's own text for decoding.  Holds where the pre-tokenizer's last step maps every byte to its
GPT-2 character (no space and no mark survives it into a pre-token); elsewhere the loss stays.

Cost: one entry and about one merge per piece of each such word (Llama-3: 588 words, 1,454 new ids,
2,040 merges, 81 KB; GLM-4.7: 893 words, 1,953 ids, 2,844 merges), and on the device one std::wregex
search per pre-token, whose set-up grows with the pattern (libstdc++ sizes its state by the automaton,
three times per pre-token; MNN hashes the pattern's text to find it in its cache): 20 encodes of a
46 KB text took MNN 3.6.1 8.1 s instead of 0.41 s for Llama-3, 10.2 s instead of 0.23 s for GLM-4.7
(about 20 us per pre-token for each 1,000 words); a 1-2 KB prompt, 10-40 ms.  Ten such words cost
3.6x: most of it is std::wregex itself.  `--ignore-merges-form merge` keeps MNN's own speed and the
loss `ignore-merges` instead.  The pre-token must hold no mark: the form holds only where the
pre-tokenizer ends in ByteLevel (`blocked`)."""

from __future__ import annotations

from dataclasses import replace

from ..ir import Pattern
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..mtok.constants import ALIAS_MARK

CHAIN_MARK = "\ue000"  # private use: the chain's tokens start with it; never in a ByteLevel pre-token
_REGEX_SPECIAL = set("\\^$.*+?()[]{}|")


def blocked(tok) -> str:
    """Why the exact form does not hold for `tok` (lowered pre-tokenizer and model), '' when it does."""
    m = tok.model
    pres = tok.pre_tokenizer.pretokenizers if isinstance(tok.pre_tokenizer, P.Sequence) else (tok.pre_tokenizer,)
    if not pres or not isinstance(pres[-1], P.ByteLevel):
        return "the pre-tokenizer does not end by mapping bytes to ByteLevel characters"
    if m.mnn_byte_level:
        return "the model maps bytes itself (MNN byte_level)"
    if any(t[:1] in (ALIAS_MARK, CHAIN_MARK) for t in m.vocab):
        return "the vocabulary holds a text starting with a mark character"
    return ""


def apply(lw, tok, words: list[tuple[str, list[str]]]):
    """`tok` with the words (each with the pieces the merges leave of it) looked up whole."""
    m = tok.model
    vocab = dict(m.vocab)
    top = max(vocab.values(), default=-1)
    fresh: dict[str, int] = {}

    def new(text: str) -> None:
        if text not in vocab and text not in fresh:
            fresh[text] = top + 1 + len(fresh)

    new(ALIAS_MARK)
    new(CHAIN_MARK)
    chain: dict[tuple[str, str], None] = {}
    for _, pieces in words:
        left = CHAIN_MARK
        for p in pieces:
            chain[(left, p)] = None
            left += p
            new(left)
    finals = tuple((ALIAS_MARK, CHAIN_MARK + w) for w, _ in words)
    aliases = {ALIAS_MARK + CHAIN_MARK + w: vocab[w] for w, _ in words}
    # aliases first: whoever inverts the dict keeps each id's own text, as the runtime does
    model = replace(m, vocab={**aliases, **vocab, **fresh}, merges=(*m.merges, *chain, *finals))
    pres = tok.pre_tokenizer.pretokenizers if isinstance(tok.pre_tokenizer, P.Sequence) else (tok.pre_tokenizer,)
    marks = ALIAS_MARK + CHAIN_MARK
    steps = (P.Metaspace(marks, "always", False),
             P.Split(Pattern(f"^{marks}(?!{_alternation([w for w, _ in words])}$)", True), "Removed", False))
    lw.did("ignore-merges-exact", f"$.model.ignore_merges: {len(words)} vocab word(s) the merges miss are looked up "
           f"whole ({len(fresh)} new ids, {len(chain) + len(finals)} merges, {len(aliases)} aliases; two "
           "pre-tokenizer steps mark a pre-token that is one of them)")
    return replace(tok, model=model, pre_tokenizer=P.Sequence((*pres, *steps)))


def _alternation(words: list[str]) -> str:
    """A regex matching exactly `words`, factored as a trie (`(?:a(?:b|c)|d)`): the std::wregex
    alternation it runs as recurses once per branch it tries, so a flat list of 1000 words would
    nest 1000 calls deep at every pre-token."""
    trie: dict = {}
    for w in words:
        node = trie
        for c in w:
            node = node.setdefault(c, {})
        node[""] = {}
    return _emit(trie)


def _emit(node: dict) -> str:
    branches = ["" if c == "" else _char(c) + _emit(child) for c, child in sorted(node.items())]
    if len(branches) == 1:
        return branches[0]
    return "(?:" + "|".join(branches) + ")"


def _char(c: str) -> str:
    return "\\" + c if c in _REGEX_SPECIAL else c


def undo(tok):
    """`tok` (a lowered or read-back IR) with the form taken out again and `ignore_merges` set: HF's
    own whole-word lookup, which does what the form does (every other vocab word is rebuilt by its
    merges anyway), for `hf_equivalent`.  An IR without the form comes back as it is."""
    m = tok.model
    pres = tok.pre_tokenizer.pretokenizers if isinstance(tok.pre_tokenizer, P.Sequence) else ()
    marks = ALIAS_MARK + CHAIN_MARK
    if not (isinstance(m, M.BPE) and len(pres) >= 2 and isinstance(pres[-2], P.Metaspace)
            and pres[-2].replacement == marks and isinstance(pres[-1], P.Split)
            and pres[-1].pattern.value.startswith("^" + marks)):
        return tok
    marked = (ALIAS_MARK, CHAIN_MARK)
    vocab = {t: i for t, i in m.vocab.items() if not t.startswith(marked)}
    merges = tuple((a, b) for a, b in m.merges if not a.startswith(marked))
    rest = pres[:-2]
    pre = rest[0] if len(rest) == 1 else P.Sequence(rest) if rest else None
    return replace(tok, pre_tokenizer=pre, model=replace(m, vocab=vocab, merges=merges, ignore_merges=True))
