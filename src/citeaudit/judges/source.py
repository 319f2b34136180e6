"""What scoring reads: each pair judged once, from a store when recorded there, else by the judge."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.errors import JudgeError, JudgeSetupError
from citeaudit.records import Judgment, SourcePassage
from citeaudit.judges.base import Judge, Request, judge_many
from citeaudit.judges.spec import JudgeSpec
from citeaudit.judges.store import JudgmentStore, RecordedJudge

if TYPE_CHECKING:
    from citeaudit.parse.resolve import ResolvedCase
    from citeaudit.judges.curated_stream import LabelTable


class Judgments:
    """What scoring reads: each pair judged once, from the store when recorded there, else by the judge
    (and then recorded). Passing a RecordedJudge makes it replay-only.

    The memo keeps every pair served until `forget()`: a streamed run forgets at each chunk of cases, so
    memory stays flat however long the input (a pair asked again later is read from the store, or judged
    again with the same result), and `recorded()` lists what was served since."""

    def __init__(self, judge: Judge, store: JudgmentStore | None = None, spec: JudgeSpec | None = None):
        self.judge = judge
        self.store = store
        self.spec = spec  # what the judge was built from, when it was named by a spec (kept in run logs)
        self._memo: dict[Request, Judgment] = {}
        self.asked = 0  # how many pairs the judge itself was asked (not memo or store)

    @property
    def signature(self) -> str:
        return self.judge.signature

    @property
    def batched(self) -> bool:
        """Whether pairs are best judged up front, in batches (model and remote judges; never a replay)."""
        return hasattr(self.judge, "judge_batch") and not isinstance(self.judge, RecordedJudge)

    def get(self, text: str, passages: Sequence[SourcePassage]) -> Judgment:
        request = Request.of(text, passages)
        found = self._memo.get(request)  # one lookup: hashing a request hashes its passages' fields
        if found is not None:
            return found
        # Read the store right before asking: another run filling it may have recorded the pair.
        found = self.store.get(request, self.signature) if self.store else None
        if found is None:
            found = self.ask(request)
            if not isinstance(self.judge, RecordedJudge):
                self.asked += 1
                if self.store is not None:
                    found = self.store.put(request, found)  # another run's, when it recorded the pair first
        self._memo[request] = found
        return found

    def ask(self, request: Request) -> Judgment:
        """The judge's own judgment of one pair (neither memo nor store)."""
        return self.judge.judge(request.text, request.passages)

    def forget(self) -> None:
        """Empty the memo (what was recorded in the store stays there)."""
        self._memo.clear()

    def recorded(self) -> list[tuple[Request, Judgment]]:
        """Every (pair, judgment) this source has served, in the order first asked."""
        return list(self._memo.items())

    def fill(self, requests: Sequence[Request], batch_size: int = 64, progress: Callable[[int], None] | None = None) -> int:
        """Judge every request not yet in the store, in batches; returns how many were judged.
        `progress(n)` is told of every request settled, whether judged or found in the store.

        The store is read again as each batch is made up, so pairs that another run recorded
        meanwhile are not judged a second time."""
        pending = list(dict.fromkeys(requests))
        judged_count = 0
        while pending:
            chunk, pending, found = self._next_batch(pending, batch_size)
            if progress and found:
                progress(found)
            if not chunk:
                continue
            try:
                judged = judge_many(self.judge, chunk)
            except JudgeError as err:
                # A batch judge may have judged most of the chunk: keep those before stopping.
                self._keep(chunk, getattr(err, "judgments", None) or [])
                raise
            self._keep(chunk, judged)
            judged_count += len(chunk)
            if progress:
                progress(len(chunk))
        return judged_count

    def _next_batch(self, pending: list[Request], size: int) -> tuple[list[Request], list[Request], int]:
        """Up to `size` pending requests the store does not hold yet, the requests left after them,
        and how many were skipped because they are judged already (here or in the store)."""
        chunk: list[Request] = []
        taken = 0
        for request in pending:
            if len(chunk) == size:
                break
            taken += 1
            if request not in self._memo and not (self.store and self.store.get(request, self.signature)):
                chunk.append(request)
        return chunk, pending[taken:], taken - len(chunk)

    def _keep(self, requests: Sequence[Request], judged: Sequence[Judgment | None]) -> None:
        for request, judgment in zip(requests, judged):
            if judgment is None:
                continue
            self.asked += 1
            if self.store is not None:
                judgment = self.store.put(request, judgment)  # another run's, when it recorded the pair first
            self._memo[request] = judgment


class _Unremembered(Judgments):
    """Judgments asked of the streamed curated judge each time: it answers from memory, faster than a
    memo finds what it answered before."""

    def get(self, text, passages):
        return self.judge.judge(text, passages)


def run_judge(spec: str | JudgeSpec, cases: Sequence[ResolvedCase] = (), conventions: str = "citeaudit") -> Judge:
    """The judge a run with these settings uses, built the same way on every path (and on every Ray
    worker): under ALCE's conventions a judge that reads passages sees each after its "Title:" line, as
    ALCE's entailment model does; the curated judge's labels are keyed by the passage text itself."""
    from citeaudit.judges.registry import build_judge, parse_judge

    spec = parse_judge(spec)
    judge = build_judge(spec, cases)
    if conventions == "alce" and not spec.labels_only:
        from citeaudit.judges.titled import TitledPassages

        judge = TitledPassages(judge)
    return judge


def judgment_source(spec: str | JudgeSpec, cases: Sequence[ResolvedCase] | Callable[[], Iterable[ResolvedCase]] = (),
                    *, store: str | Path | JudgmentStore | None = None, replay: bool = False,
                    conventions: str = "citeaudit", labels: LabelTable | None = None) -> Judgments:
    """What a run's scoring reads, built in one place for every command (score, prepare, verify, the
    desk, Ray): the judge named by `spec`, the run's conventions, the store of recorded judgments, and
    replay (judge from the store only). `cases` may be a function that reads them again: they are read
    only when the judge is built from them. A streamed run's curated labels come as a `LabelTable`."""
    from citeaudit.judges.registry import parse_judge

    spec = parse_judge(spec)
    if isinstance(store, (str, Path)):
        store = JudgmentStore(store)
    if replay and store is None:
        raise JudgeSetupError("--replay needs --store: replay judges only from recorded judgments")
    if labels is not None and spec.labels_only:
        from citeaudit.judges.curated_stream import StreamedCuratedJudge

        judge = StreamedCuratedJudge(labels)
        if store is None and not replay:
            return _Unremembered(judge, spec=spec)
    else:
        needed = (list(cases()) if callable(cases) else cases) if spec.reads_cases else []
        judge = run_judge(spec, needed, conventions)
    if replay:
        judge = RecordedJudge(store, judge.signature)
    return Judgments(judge, store, spec=spec)
