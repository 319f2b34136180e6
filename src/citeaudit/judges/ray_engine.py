"""`prepare --engine ray`: the request plan judged on a Ray cluster, recorded in the same store.

The pairs the store does not hold yet are cut into blocks of `block_size` and handed to Ray Data's
`map_batches` over a pool of actors. Each actor builds the judge once from its spec (so a model is
loaded once per worker, not once per block) and judges whole blocks. The driver alone writes to the
SQLite store, one transaction per finished block: a killed run keeps every block it had received,
and a rerun sends only what is still missing, as the local engine does (docs/distributed.md says why
the store stays on the driver rather than in per-worker files merged at the end).

A remote judge (`openai:…`, alone or inside a cascade) runs on one actor: its `concurrency` already
keeps that many requests in flight, and its `max_requests` / `max_cost` budget is counted by one
judge instance, exactly as in a local run.

Ray is an optional extra, imported only here and only when this engine runs.
"""

from __future__ import annotations

import logging
import math
import os
import pickle
import re
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from citeaudit import errors
from citeaudit.errors import CiteauditError, EngineError, JudgeError
from citeaudit.extras import require
from citeaudit.records import Judgment
from citeaudit.parse.resolve import ResolvedCase
from citeaudit.judges.registry import parse_judge
from citeaudit.judges.base import Judge, Request
from citeaudit.judges.source import Judgments, run_judge
from citeaudit.judges.spec import JudgeSpec

DEFAULT_BLOCK_SIZE = 256
# Environment variables that configure judges (CITEAUDIT_*, and the OpenAI client's usual two, which
# the remote judge falls back to): workers on other machines do not inherit the driver's
# environment, so these travel with the actors.
JUDGE_ENV_PREFIX = "CITEAUDIT_"
JUDGE_ENV_NAMES = ("OPENAI_API_KEY", "OPENAI_BASE_URL")
# An address Ray accepts: "auto", "local", "ray://HOST:PORT" (Ray Client) or "HOST:PORT" (the head's GCS).
_ADDRESS = re.compile(r"^(auto|local|ray://[^\s:/]+:\d+|[^\s:/]+:\d+)$")
REACH_TIMEOUT_S = 5.0


def _parts(judge: Any) -> Iterator[Any]:
    """The judge and every judge it wraps (a cascade's two, a titled judge's inner one)."""
    yield judge
    for attribute in ("inner", "first", "second"):
        part = getattr(judge, attribute, None)
        if part is not None:
            yield from _parts(part)


def _is_remote(judge: Judge) -> bool:
    from citeaudit.judges.remote import OpenAIJudge

    return any(isinstance(part, OpenAIJudge) for part in _parts(judge))


def import_ray() -> Any:
    ray = require("ray", "ray", "--engine ray")
    require("ray.data", "ray", "--engine ray")  # Ray Data, not only Ray core
    return ray


def check_address(address: str | None) -> None:
    """Refuse an --address Ray could not mean, before anything starts."""
    if address is not None and not _ADDRESS.match(address):
        raise EngineError(f"--address {address!r} is not a Ray cluster address; give HOST:PORT of the head "
                          "node (e.g. 10.0.0.5:6379), ray://HOST:PORT for Ray Client, or auto")


def _check_reachable(address: str) -> None:
    """Fail fast on a head node that does not answer: `ray.init` itself keeps retrying for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as err:
        raise EngineError(f"cannot reach the Ray cluster at {address}: {err.strerror or err}; is `ray start "
                          "--head` running there, and is the port open from here?") from None


def _connect(ray: Any, address: str | None) -> bool:
    """Join the cluster at `address` (or the one already joined in this process, or a new local one);
    True when this call started the connection and so should end it."""
    if address not in (None, "auto", "local"):
        _check_reachable(address)
    if ray.is_initialized():
        if address is None:
            return False
        raise EngineError(f"--address {address}: this process is already connected to a Ray cluster")
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING",
                 configure_logging=True)
    except (ConnectionError, RuntimeError, ValueError) as err:
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise EngineError(f"cannot reach {where}: {err}") from None
    return True


def _rebuild_error(name: str, message: str) -> CiteauditError:
    """A worker's error, raised again on the driver under its own class (so its exit code holds)."""
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, CiteauditError) and name not in ("InputError", "BatchJudgeError"):
        try:
            return cls(message)
        except TypeError:  # a class that needs more than a message
            pass
    return JudgeError(message)


class JudgeWorker:
    """One Ray actor: builds the judge once, then judges block after block.

    A block comes in as rows (`index`, `request`: the pickled Request) and goes out as rows (`index`,
    `judgment`: the Judgment's JSON as the store keeps it, or "" and `error_class` and `error`). A failure is
    returned, not raised, so that the driver records what the block did judge and then stops with the
    judge's own message, as the local engine does.
    """

    def __init__(self, spec: str, conventions: str, cases: Sequence[ResolvedCase] | None):
        # the spec travels as its text (parsed here again: a parsed spec holds functions, which do not pickle)
        self.setup_error: CiteauditError | None = None
        try:
            self.judge = run_judge(spec, cases or [], conventions)
        except CiteauditError as err:
            self.setup_error = err  # raised once per block by the driver, not retried by Ray

    def __call__(self, block: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        requests = [pickle.loads(raw) for raw in block["request"]]
        judged: list[Judgment | None] = [None] * len(requests)
        failed: list[CiteauditError | None] = [None] * len(requests)
        if self.setup_error is not None:
            failed = [self.setup_error] * len(requests)
        elif hasattr(self.judge, "judge_batch"):
            try:
                judged = list(self.judge.judge_batch(requests))
            except errors.BatchJudgeError as err:
                judged = list(err.judgments)
                for i, _, failure in err.failures:
                    failed[i] = failure
            except CiteauditError as err:
                failed = [err] * len(requests)
        else:
            for i, request in enumerate(requests):
                try:
                    judged[i] = self.judge.judge(request.text, request.passages)
                except CiteauditError as err:
                    failed[i] = err
                    break  # the rest of the block stays unjudged, as a local run would stop here
        # "" for none: a column of nothing but nulls would come back to the driver as floats (NaN)
        fields = [(type(e).__name__, str(e)) if e is not None else ("", "") for e in failed]
        return {
            "index": block["index"],
            "judgment": np.array([j.model_dump_json() if j is not None else "" for j in judged], dtype=object),
            "error_class": np.array([name for name, _ in fields], dtype=object),
            "error": np.array([message for _, message in fields], dtype=object),
        }


def _workers(ray: Any, judge: Judge, workers: int | None) -> int:
    if _is_remote(judge):
        return 1  # the judge's own concurrency and budget hold only within one instance
    if workers is not None:
        return workers
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def fill_with_ray(judgments: Judgments, requests: Sequence[Request], spec: str | JudgeSpec,
                  cases: Sequence[ResolvedCase],
                  conventions: str = "citeaudit", address: str | None = None, workers: int | None = None,
                  block_size: int = DEFAULT_BLOCK_SIZE, progress: Callable[[int], None] | None = None) -> int:
    """Judge every request `judgments.store` does not hold yet on Ray and record the judgments there;
    returns how many were judged (and counts them in `judgments.asked`). `judgments.judge` is the
    driver's own judge: the workers' judgments must carry its signature."""
    if judgments.store is None:
        raise EngineError("--engine ray records into a store; give --store")
    if block_size < 1 or (workers is not None and workers < 1):
        raise EngineError("--block-size and --workers must be at least 1")
    check_address(address)
    ray = import_ray()
    signature = judgments.signature
    pending = [r for r in dict.fromkeys(requests) if judgments.store.get(r, signature) is None]
    if progress and len(pending) < len(requests):
        progress(len(requests) - len(pending))
    if not pending:
        return 0  # a finished run resumed: nothing to start a cluster for
    started = _connect(ray, address)
    try:
        return _run(ray, judgments, pending, parse_judge(spec), cases, conventions, workers, block_size, progress)
    finally:
        if started:
            ray.shutdown()


def _run(ray: Any, judgments: Judgments, pending: list[Request], spec: JudgeSpec, cases: Sequence[ResolvedCase],
         conventions: str, workers: int | None, block_size: int, progress: Callable[[int], None] | None) -> int:
    remote = _is_remote(judgments.judge)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False  # the command shows its own progress
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # a failure is raised, not logged
    judge_env = {k: v for k, v in os.environ.items() if k.startswith(JUDGE_ENV_PREFIX) or k in JUDGE_ENV_NAMES}
    rows = [{"index": i, "request": pickle.dumps(request)} for i, request in enumerate(pending)]
    blocks = math.ceil(len(rows) / block_size)
    dataset = ray.data.from_items(rows, override_num_blocks=blocks)
    judged_blocks = dataset.map_batches(
        JudgeWorker,
        fn_constructor_kwargs={"spec": str(spec), "conventions": conventions,
                               "cases": list(cases) if spec.reads_cases else None},
        # A remote judge gets one block at a time: a block queued behind a failure would be paid for
        # and then dropped when the run stops.
        compute=ray.data.ActorPoolStrategy(size=min(blocks, _workers(ray, judgments.judge, workers)),
                                           **({"max_tasks_in_flight_per_actor": 1} if remote else {})),
        batch_size=block_size, batch_format="numpy",
        **({"runtime_env": {"env_vars": judge_env}} if judge_env else {}),
    )
    signature = judgments.signature
    judged_count = 0
    for block in judged_blocks.iter_batches(batch_size=None, batch_format="numpy"):
        kept: list[tuple[Request, Judgment]] = []
        failure: CiteauditError | None = None
        for index, raw, error_class, error in zip(block["index"], block["judgment"], block["error_class"],
                                                  block["error"]):
            if not raw:
                if failure is None and error:
                    failure = _rebuild_error(error_class, error)
                continue
            judgment = Judgment.model_validate_json(raw)
            if judgment.judge != signature:
                raise EngineError(f"the Ray workers judge as {judgment.judge!r} but this run's judge is "
                                  f"{signature!r}: install the same citeaudit and judge files on every node")
            kept.append((pending[int(index)], judgment))
        judgments.store.put_many(kept)  # the block's judgments first: kept even when the block failed
        judgments.asked += len(kept)
        judged_count += len(kept)
        if failure is not None:
            raise failure
        if progress:
            progress(len(block["index"]))
    return judged_count
