"""The judgment store shared by the desk's server threads: one connection, used from many threads, each
use in turn; what one thread records every other reads, and nothing is lost or doubled."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from citeaudit.judges import JudgmentStore, Request
from citeaudit.records import Judgment, SourcePassage


def _request(i: int) -> Request:
    return Request.of(f"claim {i}", [SourcePassage(id="S1", doc_id="D1", version="v1", text=f"passage {i}", start=0, end=9)])


def test_one_store_serves_many_threads(tmp_path):
    store = JudgmentStore(tmp_path / "desk.db")  # opened here, used on the pool's threads below

    def work(i: int) -> str:
        request = _request(i % 50)  # each pair recorded by several threads: the first one is kept
        kept = store.put(request, Judgment(label="full" if i % 2 else "none", judge="j@1"))
        found = store.get(request, "j@1")
        assert found == kept
        return found.label

    with ThreadPoolExecutor(max_workers=8) as pool:
        labels = list(pool.map(work, range(400)))
    assert len(store) == 50
    # every thread saw, for its pair, the one judgment the store keeps
    for i, label in enumerate(labels):
        assert label == store.get(_request(i % 50), "j@1").label
    assert store.check().ok
    store.close()
