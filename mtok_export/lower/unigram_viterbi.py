"""The runtime's Unigram Viterbi beside HF's, each as written (`unigram-unk-node`: the loss, its projection).

MNN 3.6.1, `transformers/llm/engine/src/tokenizer/tokenizer.cpp`, `UnigramModel::tokenize` (lines
1686-1771 at tag 3.6.1, commit d407447e; the class is the same on master in 2026): one pass over
*end* byte offsets i; every piece `text[j:i]` with a reachable j (the unk piece itself skipped:
`found_id != unk_token_id_`) is a candidate scored `best_scores[j] + scores_[id]`, j walked from
i-1 down (strict `>`: among equal totals the shortest last piece stays).  Then (line 1734)

    if (best_scores[i] <= -1e17) {        // no piece ended at i
        ... char_len = length of the UTF-8 character ending at i (1 if i is inside one)
        best_scores[i] = best_scores[i - char_len] + scores_[unk_token_id_]; best_ids[i] = unk

so an unk node for the character ending at i exists only where *no piece ends at i*, and it is
scored with the unk piece's own score from the file (not "where no piece *starts*": a piece
starting at the character, `\\r\\r` before a lone `\\r`, changes nothing there).  HF `tokenizers`
(`Unigram::encode_optimized`, like sentencepiece) walks *start* positions and adds an unk node of
one character wherever no one-character piece starts there, whatever else starts or ends around
it, scored `min_score - 10`.

So the runtime has no unk node where HF has one when a character c with no one-character piece
is the last character of a longer piece the text holds (`#\\r` in a 262k SentencePiece model: HF
`▁#` + unk, the runtime `▁` + `#\\r`), and where both have it they score it differently (0.0 in
most files against HF's `min_score - 10`), which matters only where another path covers c inside
a longer piece.  No piece in the file can stand for unk in the runtime (a piece with unk's id is
skipped, any other id is another id), so this stays a loss.  Its scoring half alone could be closed
by writing the unk piece's score as HF's `min_score - 10` (the loop reads it nowhere else); that
changes every Unigram file, and is left to a decision of its own.

These functions run the two loops literally (byte offsets, f64 sums in the engines' order, each
tie-break), on the pieces and scores of an IR."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import models as M

K_UNK_PENALTY = 10.0  # HF's kUnkPenalty: unk scored min_score - 10
_FAR = -1e17  # the runtime's "unreachable" threshold
_NONE = -1e18  # its initial best score


@dataclass(frozen=True)
class Pieces:
    """One Unigram model's pieces as the engines look them up: UTF-8 bytes -> (id, score)."""

    table: dict[bytes, tuple[int, float]]
    lengths: tuple[int, ...]  # the piece lengths in bytes, ascending
    unk_id: int
    unk_score: float  # the unk piece's own score (the runtime's)
    min_score: float  # the lowest score of any piece (HF's unk is min_score - 10)

    @classmethod
    def of(cls, m: M.Unigram) -> "Pieces":
        table = {p.encode("utf-8", "surrogatepass"): (i, s) for i, (p, s) in enumerate(m.vocab)}
        return cls(table, tuple(sorted({len(b) for b in table})), *_unk(m), min((s for _, s in m.vocab), default=0.0))


def _unk(m: M.Unigram) -> tuple[int, float]:
    """The unk id the runtime uses (0 without one) and its piece's score."""
    unk = m.unk_id if m.unk_id is not None else 0
    return unk, m.vocab[unk][1] if unk < len(m.vocab) else -10.0


def runtime_ids(p: Pieces, text: str) -> list[int]:
    """MNN 3.6.1 `UnigramModel::tokenize` on one pre-token (no byte fallback), line for line."""
    b = text.encode("utf-8", "surrogatepass")
    n = len(b)
    if not n:
        return []
    longest = p.lengths[-1] if p.lengths else 0
    best = [_NONE] * (n + 1)
    ids = [-1] * (n + 1)
    prev = [0] * (n + 1)
    best[0] = 0.0
    for i in range(1, n + 1):
        for j in range(i - 1, max(i - longest, 0) - 1, -1):
            if best[j] <= _FAR:
                continue
            hit = p.table.get(b[j:i])
            if hit is None or hit[0] == p.unk_id:
                continue
            score = best[j] + hit[1]
            if score > best[i] or best[i] <= _FAR:
                best[i], prev[i], ids[i] = score, j, hit[0]
        if best[i] <= _FAR:  # no piece ends here: the only place the runtime adds an unk node
            char_len = 1
            for k in range(1, 5):
                if i - k < 0:
                    break
                c = b[i - k]
                if c & 0xC0 != 0x80:
                    expected = 4 if c >= 0xF0 else 3 if c >= 0xE0 else 2 if c >= 0xC0 else 1
                    if expected == k:
                        char_len = k
                    break
            if best[i - char_len] > _FAR:
                best[i], prev[i], ids[i] = best[i - char_len] + p.unk_score, i - char_len, p.unk_id
    if best[n] <= _FAR:
        return []
    return _path(ids, prev, n, p.unk_id)


def hf_ids(p: Pieces, text: str) -> list[int]:
    """HF `Unigram::encode_optimized` on one pre-token (fuse_unk, no byte fallback): per start
    character, every piece starting there, then an unk node (min_score - 10) when none of them is
    that one character; strict `>` (among equal totals the longest last piece stays)."""
    b = text.encode("utf-8", "surrogatepass")
    n = len(b)
    best: list[float | None] = [None] * (n + 1)
    ids = [-1] * (n + 1)
    prev = [0] * (n + 1)
    best[0] = 0.0
    unk_score = p.min_score - K_UNK_PENALTY
    s = 0
    for c in text:
        width = len(c.encode("utf-8", "surrogatepass"))
        here = best[s] if best[s] is not None else 0.0
        single = False
        for k in p.lengths:
            if s + k > n:
                break
            hit = p.table.get(b[s:s + k])
            if hit is None:
                continue
            score = hit[1] + here
            if best[s + k] is None or score > best[s + k]:
                best[s + k], prev[s + k], ids[s + k] = score, s, hit[0]
            single = single or k == width
        if not single:
            score = unk_score + here
            if best[s + width] is None or score > best[s + width]:
                best[s + width], prev[s + width], ids[s + width] = score, s, p.unk_id
        s += width
    return _path(ids, prev, n, p.unk_id)


def _path(ids: list[int], prev: list[int], n: int, unk_id: int) -> list[int]:
    """The best path's ids, back from byte `n`, consecutive unks fused into one (both loops fuse)."""
    out: list[int] = []
    cur = n
    while cur > 0:
        if not out or ids[cur] != unk_id or out[-1] != unk_id:
            out.append(ids[cur])
        cur = prev[cur]
    return out[::-1]


def differing_chars(m: M.Unigram, hf_min_score: float | None = None, split_out=frozenset()) -> frozenset[str]:
    """The characters where the two lattices can differ: those with no one-character piece that
    end a longer piece (there the runtime has no unk node), or, where the file's unk score is not
    HF's `min_score - 10`, that occur in a longer piece at all (a path through the runtime's unk
    node is scored otherwise).  Pieces the runtime can never take (the unk piece, or scored
    -1e17 or below: `lower.models.UNREACHABLE`) end nothing.  Empty with byte fallback, where a
    byte piece covers every such character in both.  `m`: the model as written; `hf_min_score`:
    the lowest score of the model HF runs (the source's) [default: `m`'s]; `split_out`: piece texts
    the added-token pass takes out of the text before the model runs (they end nothing either)."""
    if m.byte_fallback:
        return frozenset()
    unk_id, unk_score = _unk(m)
    low = min((s for _, s in m.vocab), default=0.0) if hf_min_score is None else hf_min_score
    longer = [t for i, (t, s) in enumerate(m.vocab)
              if len(t) > 1 and i != unk_id and s > _FAR and t not in split_out]
    # set operations, not a loop per piece: this runs in every Unigram export's lowering
    held = set().union(*longer) if unk_score != low - K_UNK_PENALTY else {t[-1] for t in longer}
    return frozenset(held - {t for t, _ in m.vocab if len(t) == 1})
