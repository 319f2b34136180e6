"""chunks: the batches exports write and the chunks a streamed run scores."""

from __future__ import annotations

import itertools

from citeaudit.iteration import chunks


def test_chunks_keep_order_and_the_last_is_shorter():
    assert list(chunks(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert list(chunks(range(4), 2)) == [[0, 1], [2, 3]]
    assert list(chunks([], 3)) == []


def test_chunks_read_one_chunk_at_a_time():
    first = next(chunks(itertools.count(), 3))  # an endless input: only the first chunk is read
    assert first == [0, 1, 2]
