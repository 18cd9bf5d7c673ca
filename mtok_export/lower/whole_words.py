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

So three steps end the pre-tokenizer: `Metaspace(C A B)` puts three marks before every pre-token;
`Split(A B(?:w1|w2|...)$, Isolated)` cuts `C` off a pre-token whose rest is exactly one of the words
the merges miss; `Split(^C(?:A B)?, Removed)` then drops that lone `C`, and takes `C A B` off every
other pre-token.  Such a word reaches the model as `A B w`; the vocabulary's merges make
`A B p1 .. pk` of it (the marks merge with nothing), then merges ranked after all the source's
build `B p1`, `B p1 p2`, ..., `B w` (new ids, which only `B` starts), and last `A` + `B w` is the
alias `A B w` of `w`'s id.  Every other pre-token reaches the model as it was, and no merge of
those pairs can fire in it: the marks are characters no ByteLevel pre-token holds.  The alias
mark `A` (`mtok.constants.ALIAS_MARK`) sorts before every ByteLevel text, so the runtime keeps each
id's own text for decoding.  Holds where the pre-tokenizer's last step maps every byte to its
GPT-2 character (no space and no mark survives it into a pre-token); elsewhere the loss stays.

Cost: one entry and about one merge per piece of each such word (Llama-3: 588 words, 1,454 new ids,
2,040 merges, 81 KB; GLM-4.7: 893 words, 1,953 ids, 2,844 merges), and on the device one std::wregex
search of the words' pattern per pre-token.  Its set-up grows with the pattern: libstdc++ sizes a
vector by the automaton (16 bytes a state, about one state a character of the pattern) at every
`regex_search`, once more for every lookahead it evaluates, and once more for the search after a
match, so the cost is the number of searches of the big pattern times its size, not the matching.
The cut form above runs ONE such search on a pre-token that is no word (no match: the iterator
ends; only the marks' own step, a pattern of a few states, matches it).  The form written before
(`Metaspace(A B)`, then `Split(^A B(?!(?:w1|...)$), Removed)`, which matched every pre-token) ran
three: the search, its lookahead, and the search after the match.  On MNN 3.6.1 (CPU time, 30 KB
prompts, Llama-3): 77 ms instead of 118-157 ms a prompt, MNN's exporter's file (no ignore_merges)
3-5 ms; the same std::wregex calls alone, 9.4 instead of 40.7 us a pre-token.  Factoring the trie's
leaves into brackets saved under 1% of the pattern (not done).  What is left is the automaton's
size: still about 20x MNN's own speed on Llama-3 (about 10 us a pre-token for its 5,500-character
pattern).  `--ignore-merges-form merge` keeps MNN's own speed and the loss `ignore-merges` instead.
The pre-token must hold no mark: the form holds only where the pre-tokenizer ends in ByteLevel
(`blocked`).  `undo` also reads the form written before (files written by earlier versions).pre-tokenizer ends in ByteLevel (`blocked`)."""

from __future__ import annotations

from dataclasses import replace

from ..ir import Pattern
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..mtok.constants import ALIAS_MARK

CHAIN_MARK = "\ue000"  # private use: the chain's tokens start with it; never in a ByteLevel pre-token
CUT_MARK = "\ue001"  # private use: cut off a word's pre-token, then dropped; never reaches the model
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
    steps = (P.Metaspace(CUT_MARK + marks, "always", False),
             P.Split(Pattern(f"{marks}{_alternation([w for w, _ in words])}$", True), "Isolated", False),
             P.Split(Pattern(f"^{CUT_MARK}(?:{marks})?", True), "Removed", False))
    lw.did("ignore-merges-exact", f"$.model.ignore_merges: {len(words)} vocab word(s) the merges miss are looked up "
           f"whole ({len(fresh)} new ids, {len(chain) + len(finals)} merges, {len(aliases)} aliases; three "
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
    n = _steps(pres)
    if not (isinstance(m, M.BPE) and n):
        return tok
    marked = (ALIAS_MARK, CHAIN_MARK)
    vocab = {t: i for t, i in m.vocab.items() if not t.startswith(marked)}
    merges = tuple((a, b) for a, b in m.merges if not a.startswith(marked))
    rest = pres[:-n]
    pre = rest[0] if len(rest) == 1 else P.Sequence(rest) if rest else None
    return replace(tok, pre_tokenizer=pre, model=replace(m, vocab=vocab, merges=merges, ignore_merges=True))


def _steps(pres) -> int:
    """How many steps at the end of `pres` are the form: 3 (the cut form), 2 (the lookahead form
    written before), 0 (none)."""
    marks = ALIAS_MARK + CHAIN_MARK

    def split(p, start: str, behavior: str) -> bool:
        return isinstance(p, P.Split) and p.behavior == behavior and p.pattern.value.startswith(start)

    if (len(pres) >= 3 and isinstance(pres[-3], P.Metaspace) and pres[-3].replacement == CUT_MARK + marks
            and split(pres[-2], marks, "Isolated") and split(pres[-1], "^" + CUT_MARK, "Removed")):
        return 3
    if (len(pres) >= 2 and isinstance(pres[-2], P.Metaspace) and pres[-2].replacement == marks
            and split(pres[-1], "^" + marks, "Removed")):
        return 2
    return 0
