"""Read-only views of a `.mtok` vocab and merge table, for `read_mtok(..., lazy=True)`.

`inspect` prints the vocab size, a few entries at each end and the names of some ids, so it has the
reader check every invariant (spec section 3) but skip building the 150k-entry dict and the merge
pairs it would never show.  The views behave as the full read's values do (a dict in id order, a
tuple in rank order) and build what a caller asks for on first use."""

from __future__ import annotations

from collections.abc import ItemsView, Mapping, Sequence


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

    __slots__ = ("_at", "_first", "_second", "_tokens")

    def __init__(self, tokens: Sequence[str], first, second, at: list[int]):
        """`first[k]`, `second[k]`: the ids of the k-th merge in the file; `at[rank]`: its k."""
        self._tokens, self._first, self._second, self._at = tokens, first, second, at

    def __len__(self) -> int:
        return len(self._at)

    def __getitem__(self, rank):
        if isinstance(rank, slice):
            return tuple(self[r] for r in range(*rank.indices(len(self))))
        k = self._at[rank]
        return self._tokens[self._first[k]], self._tokens[self._second[k]]

    def __eq__(self, other):
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None
