"""One bounded cache for what judges remember (token counts, windows, embeddings)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A mapping that keeps at most `maxsize` entries, forgetting the least recently used first.

    Judges remember what they computed for a text because the same passage is read again and again
    (cited by several claims, judged alone and in its set); bounded, so a long run does not grow
    without end. What is remembered must be what would be computed again: forgetting changes speed,
    never a result.
    """

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: K) -> V | None:
        """The value under `key` (now the most recently used), or None."""
        if key not in self._data:
            return None
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key: K, value: V) -> V:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)
        return value

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        """The remembered value, or `compute(key)`, remembered."""
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key]
        return self.put(key, compute(key))
