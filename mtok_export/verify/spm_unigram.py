"""sentencepiece's Unigram Viterbi as the library computes it: path scores added in float32 (issue 40).

What the library does (google/sentencepiece `src/unigram_model.cc`, read for 0.2.1 and 0.2.3): one
lattice over the whole normalized text, with no split at spaces.  The default encoder
(`Model::EncodeOptimized`) keeps, per end position, the best path ending there as a *float*
running total: each candidate is `score + best_path_score_till_here`, float + float, compared with
a strict `>`, so among equal totals the first candidate (the earliest start: the longest last
piece) stays.  0.2.3 also rebases the running totals to 0 whenever the total at a start position
passes +-100,000 (`kScoreResetThreshold`), by a float subtraction; 0.2.1 does not.  The older
`Lattice::Viterbi` adds the same floats in the same order (`backtrace_score + score`).  Pieces in
the lattice are the NORMAL, USER_DEFINED and UNUSED ones (the last skipped when met); CONTROL,
UNKNOWN and BYTE pieces are not; a character no one-character piece starts is unknown, scored
`min_score - 10` (float, over NORMAL pieces), and consecutive unknowns give one unk id (with
`byte_fallback`, their UTF-8 bytes' `<0xHH>` pieces instead).

HF `tokenizers` (and the runtime) add f64 scores per pre-token, which for float32 scores is exact
up to far longer texts; so where two segmentations of the same text differ by less than float32's
rounding of the running total (one ulp is 1.2e-4 at a total of -1,316, where the 262k Unigram of
issue 40 meets `Library` against `Li br ary`, 6.9e-5 apart), sentencepiece can keep the lower one.

`near_tie` is the evidence attribution asks for: this model, run on the library's own pieces and
scores (its loaded `ModelProto`, not the IR), gives exactly the reference's ids, and an exact Viterbi
over the same pieces shows those ids score below the best path, which HF's ids (HF on the IR)
reach.  Then the difference is float32 rounding and nothing else: where the IR holds a wrong score
(a reader bug), HF's path is not the library's best, and nothing is shown."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache

from ..ir.sentencepiece import BYTE_PIECE
from ..lower.unigram_viterbi import K_UNK_PENALTY  # sentencepiece's kUnkPenalty, which HF took over

_F32 = struct.Struct("<f")
RESET = 100000.0  # kScoreResetThreshold (0.2.3): the running total rebased past +-RESET
_SCALE = 1074  # 2**-1074, the smallest f64 step: every f64 score is an integer multiple of it


def f32(x: float) -> float:
    """`x` rounded to the nearest float32 (ties to even), as a C++ float operation rounds.  The
    operands are float32 values, so their f64 sum or difference rounded once more is the float32
    one (53 >= 2 * 24 + 2 bits: double rounding is innocuous for + and -)."""
    return _F32.unpack(_F32.pack(x))[0]


# ModelProto.SentencePiece.Type values read here (the lattice holds NORMAL pieces; UNUSED ones the
# library meets and skips, the same as absent)
NORMAL, UNKNOWN, BYTE = 1, 2, 6


@dataclass(frozen=True)
class Lattice:
    """The library's own Unigram pieces as its lattice holds them: `pieces` (text -> id, score, the
    score as a float), the piece lengths in characters, the unknown piece's id and score, byte
    fallback's pieces, what normalized text each id stands for, and every id's score."""

    pieces: dict[str, tuple[int, float, float]]
    lengths: tuple[int, ...]
    unk: tuple[int, float] | None
    bytes_: dict[int, int]  # byte -> id of its <0xHH> piece (byte_fallback)
    text_of: dict[int, bytes]  # id -> the bytes of normalized text it stands for (not unk, not control)
    scores: tuple[float, ...]

    @classmethod
    def of_proto(cls, m) -> "Lattice":
        """From the `ModelProto` the library loaded (`serialized_model_proto()`): the reference's
        pieces and scores, not the IR's, so a score the reader got wrong shows as a path HF takes
        that is not the best.  USER_DEFINED pieces are left out (the library scores them by a
        length bonus that changed between versions): where their text occurs the model gives other
        ids than the library, and `near_tie` shows nothing there."""
        pieces, text_of, bytes_, normal, unk_ids = {}, {}, {}, [], []
        for i, p in enumerate(m.pieces):
            if p.type == NORMAL:
                pieces[p.piece] = (i, p.score, f32(p.score))
                normal.append(p.score)
                text_of[i] = p.piece.encode("utf-8")
            elif p.type == BYTE and BYTE_PIECE.fullmatch(p.piece):
                bytes_[int(p.piece[3:5], 16)] = i
                text_of[i] = bytes([int(p.piece[3:5], 16)])
            elif p.type == UNKNOWN:
                unk_ids.append(i)
        ts = m.trainer_spec
        unk_id = ts.unk_id if 0 <= ts.unk_id < len(m.pieces) and ts.unk_id in unk_ids else (unk_ids or [None])[0]
        unk = (unk_id, f32(f32(min(normal)) - K_UNK_PENALTY)) if unk_id is not None and normal else None
        return cls(pieces, tuple(sorted({len(p) for p in pieces})), unk, bytes_ if ts.byte_fallback else {},
                   text_of, tuple(p.score for p in m.pieces))

    # ------------------------------------------------------------------ the two arithmetics
    def viterbi_f32(self, text: str, rebase: bool) -> list[int]:
        """`Model::EncodeOptimized` on normalized `text`, float32 as the library adds (with the
        0.2.3 rebase, or without it as 0.2.1 and `Lattice::Viterbi`)."""
        n = len(text)
        best = [0.0] * (n + 1)
        start = [-1] * (n + 1)
        ident = [-1] * (n + 1)
        frontier = 0
        for s in range(n):
            here = best[s]
            if rebase and (here < -RESET or here > RESET):
                for i in range(s, frontier + 1):
                    if i == s or start[i] != -1:
                        best[i] = f32(best[i] - here)
                here = 0.0
            single = False
            for k, hit in self._starting(text, s):
                frontier = max(frontier, s + k)
                c = f32(hit[2] + here)
                if start[s + k] == -1 or c > best[s + k]:
                    best[s + k], start[s + k], ident[s + k] = c, s, hit[0]
                single = single or k == 1
            if not single:
                if self.unk is None:
                    return []  # the library has an unk id for every model it loads
                frontier = max(frontier, s + 1)
                c = f32(self.unk[1] + here)
                if start[s + 1] == -1 or c > best[s + 1]:
                    best[s + 1], start[s + 1], ident[s + 1] = c, s, self.unk[0]
        return self._emit(text, start, ident)

    def _starting(self, text: str, s: int):
        """The pieces of `text` starting at `s`, shortest first: (length, (id, score, float score))."""
        for k in self.lengths:
            if s + k > len(text):
                break
            hit = self.pieces.get(text[s:s + k])
            if hit is not None:
                yield k, hit

    def best_exact(self, text: str) -> int | None:
        """The best path's total over `text`, exactly (in units of 2**-1074): what any engine
        without rounding finds.  None where some character is not covered (no unk)."""
        n = len(text)
        best: list[int | None] = [None] * (n + 1)
        best[0] = 0
        for s in range(n):
            here = best[s]
            if here is None:
                continue
            single = False
            for k, hit in self._starting(text, s):
                c = here + _exact(hit[1])
                if best[s + k] is None or c > best[s + k]:
                    best[s + k] = c
                single = single or k == 1
            if not single and self.unk is not None:
                c = here + _exact(self.unk[1])
                if best[s + 1] is None or c > best[s + 1]:
                    best[s + 1] = c
        return best[n]

    def total(self, ids) -> int | None:
        """The exact total of a path of piece ids (None: an id with no score here)."""
        try:
            return sum(_exact(self.scores[i]) for i in ids)
        except IndexError:
            return None

    # ------------------------------------------------------------------ ids <-> text
    def _emit(self, text: str, start: list[int], ident: list[int]) -> list[int]:
        """The path's ids as `SentencePieceProcessor::Encode` returns them: consecutive unknowns as
        one unk id, or (byte fallback) as their bytes' pieces."""
        path, e = [], len(text)
        while e > 0:
            path.append((start[e], e, ident[e]))
            e = start[e]
        out: list[int] = []
        unk = self.unk[0] if self.unk else None
        for s, e, i in reversed(path):
            if i == unk and self.bytes_:
                for b in text[s:e].encode("utf-8", "surrogatepass"):
                    if b not in self.bytes_:
                        return []
                    out.append(self.bytes_[b])
            elif not (i == unk and out and out[-1] == unk):
                out.append(i)
        return out

    def text(self, ids) -> str | None:
        """The normalized text a path of ids covers, or None where it cannot be known (an unk id,
        an id outside the lattice, bytes that are not UTF-8)."""
        try:
            return b"".join(self.text_of[i] for i in ids).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            return None


@lru_cache(maxsize=1 << 16)
def _exact(score: float) -> int:
    """A f64 score in units of 2**-1074, so sums of any length are exact (Python integers)."""
    n, d = score.as_integer_ratio()
    return n * ((1 << _SCALE) // d)


@dataclass(frozen=True)
class NearTie:
    """The evidence for one mismatch: the reference's path total and the best one (exact, as
    floats for the report), the gap, and which float32 variant reproduced the reference."""

    reference_total: float
    best_total: float
    rebase: bool

    @property
    def gap(self) -> float:
        return self.best_total - self.reference_total


def near_tie(lattice: Lattice, want: list[int], hf: list[int]) -> NearTie | None:
    """Is the reference's `want` sentencepiece's float32 rounding of a path HF's `hf` shows is
    better?  Both must cover the same normalized text (no unk); an exact Viterbi over it must find
    a total above `want`'s that `hf` reaches; and the float32 model must give `want` exactly (with
    the 0.2.3 rebase, or without it: both are the library's).  None: not shown."""
    text = lattice.text(want)
    if not text or lattice.text(hf) != text:
        return None
    mine, theirs, top = lattice.total(want), lattice.total(hf), lattice.best_exact(text)
    if mine is None or theirs is None or top is None or not (theirs == top > mine):
        return None
    for rebase in (True, False):
        if lattice.viterbi_f32(text, rebase) == list(want):
            return NearTie(mine / (1 << _SCALE), top / (1 << _SCALE), rebase)
    return None
