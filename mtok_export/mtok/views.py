"""Read-only views of a `.mtok` vocab and merge table, for `read_mtok(..., lazy=True)`.

`inspect` prints the vocab size, a few entries at each end and the names of some ids, so it has the
reader check every invariant (spec section 3) but skip building the 150k-entry dict and the merge
pairs it would never show.  The views behave as the full read's values do (a dict in id order, a
tuple in rank order) and build what a caller asks for on first use."""

from __future__ import annotations

from collections.abc import ItemsView, Mapping, Sequence


class Utf8Tokens(Sequence):
    """Tokens by id, kept as the file's UTF-8 bytes (the reader checked they decode) and decoded
    when asked: a whole-vocab list of 150k strings is most of a lazy read's memory."""

    __slots__ = ("_raw",)

    def __init__(self, raw: list[bytes]):
        self._raw = raw

    def __len__(self) -> int:
        return len(self._raw)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [b.decode("utf-8") for b in self._raw[i]]
        return self._raw[i].decode("utf-8")

    def __iter__(self):  # one decode for all, split at the NULs joined in (unless a token holds one)
        tokens = b"\x00".join(self._raw).decode("utf-8").split("\x00")
        return iter(tokens if len(tokens) == len(self._raw) else [b.decode("utf-8") for b in self._raw])


class IdVocab(Mapping):
    """token -> id over the tokens stored by id; iterates in id order, as the full read's dict."""

    __slots__ = ("_index", "by_id")

    def __init__(self, by_id: Sequence[str]):
        self.by_id = by_id
        self._index: dict | None = None

    def __len__(self) -> int:
        return len(self.by_id)

    def __iter__(self):
        return iter(self.by_id)

    def __getitem__(self, token: str) -> int:
        if self._index is None:
            self._index = dict(zip(self.by_id, range(len(self.by_id))))
        return self._index[token]

    def items(self):
        return _IdItems(self)

    def __eq__(self, other):
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    __hash__ = None


class _IdItems(ItemsView):
    def __iter__(self):
        return zip(self._mapping.by_id, range(len(self._mapping)))


class RankedMerges(Sequence):
    """The merge pairs in rank order, made from the file's id arrays on access."""

    __slots__ = ("_at", "_first", "_ranks", "_second", "_tokens")

    def __init__(self, tokens: Sequence[str], first, second, ranks):
        """`first[k]`, `second[k]`, `ranks[k]`: the ids and the rank of the k-th merge in the file
        (the ranks a permutation of 0..n-1, as the reader checked)."""
        self._tokens, self._first, self._second, self._ranks = tokens, first, second, ranks
        self._at: list[int] | None = None  # at[rank] = k, built on first access

    def __len__(self) -> int:
        return len(self._ranks)

    def __getitem__(self, rank):
        if isinstance(rank, slice):
            return tuple(self[r] for r in range(*rank.indices(len(self))))
        if self._at is None:
            self._at = scatter(range(len(self._ranks)), self._ranks, len(self._ranks))
        k = self._at[rank]
        return self._tokens[self._first[k]], self._tokens[self._second[k]]

    def __eq__(self, other):
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None


def scatter(values, positions, n: int) -> list:
    """`out[positions[k]] = values[k]`; None where no position names a slot.  (A plain loop: on
    CPython 3.11 it beats `map(out.__setitem__, ...)` by 3x.)"""
    out: list = [None] * n
    for i, v in zip(positions, values):
        out[i] = v
    return out
