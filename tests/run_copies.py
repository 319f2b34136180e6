"""Run logs of any size made from the golden P7 run without scoring: its three answers (support 1/3, 1/1
and 3/3) copied into as many cases as asked, with the summary summed again from the copies. For the
renderers and `compare`, which read a log's records and never score."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "p7.runlog.json"


def golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def _summed(answers: list[dict]) -> dict:
    out: dict[str, dict] = {}
    for a in answers:
        for name, r in a["metrics"].items():
            if r["kind"] != "ratio":
                continue
            s = out.setdefault(name, {**r, "numerator": 0, "denominator": 0})
            s["numerator"] += r["numerator"]
            s["denominator"] += r["denominator"]
    for r in out.values():
        r["value"] = r["numerator"] / r["denominator"] if r["denominator"] else None
        if r["denominator"]:
            r.pop("reason", None)
    return out


def _labels(answers: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for a in answers:
        for label, n in a["labels"].items():
            out[label] = out.get(label, 0) + n
    return out


def resum(data: dict) -> dict:
    """Sum the summary again from the answers and cases (after they were copied or edited)."""
    results = data["results"]
    for a in results["answers"]:
        counts: dict[str, int] = {}
        for c in a["claims"]:
            j = c["judgment"]
            label = "unjudged" if j is None else "uncertain" if j.get("uncertain") else j["label"]
            counts[label] = counts.get(label, 0) + 1
        a["labels"] = {label: counts.get(label, 0) for label in ("full", "partial", "none", "contradicts")} | {
            k: v for k, v in counts.items() if k in ("uncertain", "unjudged")}
    systems: dict[str, list[dict]] = {}
    for a in results["answers"]:
        systems.setdefault(a["system"], []).append(a)
    results["summary"] = {
        "all": _summed(results["answers"]),
        "by_system": {s: _summed(answers) for s, answers in systems.items()},
        "labels": _labels(results["answers"]),
        "retrieval": _summed([{"metrics": c["retrieval"]} for c in results["cases"]]),
    }
    return data


def copied_run(cases: int, edit: Callable[[int, dict], None] | None = None) -> dict:
    """The golden run's case copied `cases` times (ids case-00000, …), each with answers A, B and C
    (ids A-00000, …); `edit(i, answer)` may change each copied answer record before summing."""
    data = golden()
    results = data["results"]
    template_case, templates = results["cases"][0], results["answers"]
    results["cases"], results["answers"] = [], []
    for i in range(cases):
        case = copy.deepcopy(template_case)
        case["id"] = f"case-{i:05d}"
        results["cases"].append(case)
        for t in templates:
            answer = copy.deepcopy(t)
            answer.update(case=case["id"], answer=f"{t['system']}-{i:05d}")
            if edit:
                edit(i, answer)
            results["answers"].append(answer)
    return resum(data)


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def as_log(data: dict):
    """The log the JSON reads as (migrated from the golden file's schema version, as reading does)."""
    from citeaudit.run.log import MIGRATIONS, RunLog

    while data["schema_version"] in MIGRATIONS:
        data = MIGRATIONS[data["schema_version"]](data)
    return RunLog.model_validate(data)
