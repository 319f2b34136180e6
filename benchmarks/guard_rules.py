"""Which qualifier-guard rules are right: each rule's firings on the dev split or a held-out source, and
the guard's net effect.

    python benchmarks/guard_rules.py [--split dev|test] [--lang en|zh] [--data DIR] [--cache DIR] [--baseline REV]
                                     [--show RULE]
    python benchmarks/guard_rules.py --source fever-test|rte-dev|cad-snli-test [--rows N] [--seed S] [--rest] ...

--source measures on an NLI file that no training or development step reads (training.data.NLI_HELD_OUT:
FEVER-NLI test, RTE dev, CAD-SNLI test; training reads FEVER-NLI dev, RTE train and CAD-SNLI train):
the hypothesis is the claim, the premise its one passage, entailment is `full`, anything else is not.
--rows N draws N pairs with --seed (default 2,000 with seed 0; 0: every pair), --rest takes the pairs
that draw leaves instead, so that a source can be split into pairs to check rules on and pairs held
back until the rules are final. The train tables are printed for a split only. --lang keeps the rows of
one language (the split's `lang`; the train tables too): `--lang zh` measures the rules on Chinese claims,
which run guard.RULES_ZH.

The `model` judge runs once over the rows with the guard off (`judge_batch(..., guard=False)`); its
label, scores and the text of the window it chose (`evidence_text`) are cached as JSON under --cache
(default /tmp/citeaudit-guard-rules, keyed by the guard-off judge's signature and the rows, so that a new
guard reuses them), and a rerun only re-applies the rules (about 2 minutes for the model on a split, 70
seconds per 2,000 NLI pairs, on 2 cores; then seconds). Then:

  per rule, on the model's fulls
             each rule of guard.RULES and guard.TRIED_RULES alone (guard.check(..., rules={rule})) on
             every pair the model calls `full`: how often it fires, how often it is right (the gold
             label is not `full`), its precision, and the balanced accuracy it adds alone;
  per rule, on every pair
             the same on every pair of the split, whatever the model said (more firings to count: how
             right the rule is about the text, apart from the model);
  guard      the whole guard as `model` applies it (a `full` it fires on is no longer full) against
             the guard off: the guard of revision --baseline (default 810d019, guard version 2; its
             guard.py and quantities.py read with `git show`), today's RULES (RULES_ZH on Chinese
             claims), RULES on every claim when some are Chinese, and RULES with TRIED_RULES.
             Balanced accuracy (full vs the rest), overall and per source.

`--show RULE` lists the pairs on which RULE fires among the model's fulls, with the gold label.

A set of several cited passages is judged with the guard off and the guard applied to the judgment
that stands (the strongest of the set and its subsets), while the judge itself guards each subset
before picking the strongest; the two can differ only on rows that cite several passages (25 of the
673 dev rows).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from citeaudit.judges import guard
from citeaudit.judges.base import Request
from citeaudit.files.labelled import Row, parse_rows
from citeaudit.stats import balanced_accuracy
from citeaudit.text import has_han
from citeaudit.training.data import NLI_HELD_OUT, load_all, read_nli, split_rows

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = Path("/tmp/citeaudit-guard-rules")
BASELINE = "810d019"  # guard version 2 (rules split and measured), before the number-word, count and negation misfires were fixed

Check = Callable[[str, str], "guard.GuardFinding | None"]


def split_of(name: str, data_dir: str | None) -> list[Row]:
    rows = split_rows(load_all(data_dir))[name]
    return parse_rows([json.dumps(r, ensure_ascii=False) for r in rows])


def held_out(name: str, n: int, seed: int, data_dir: str | None, rest: bool = False) -> list[Row]:
    """A fixed sample of `n` pairs (drawn with `seed`; all when n is 0 or more than there are), or with
    `rest` the pairs that sample leaves, of an NLI file that no training or development step reads
    (training.data.NLI_HELD_OUT): the hypothesis is the claim, the premise its one passage, entailment
    is `full` and anything else is not."""
    pairs = read_nli(name, data_dir)
    drawn = set(random.Random(seed).sample(range(len(pairs)), n)) if 0 < n < len(pairs) else set(range(len(pairs)))
    chosen = [i for i in range(len(pairs)) if (i in drawn) != rest]
    return parse_rows([json.dumps({"id": f"{name}:{i}", "claim": pairs[i]["hypothesis"],
                                   "passages": [{"id": "P", "text": pairs[i]["premise"]}],
                                   "label": pairs[i]["label"], "source": name, "lang": "en"}, ensure_ascii=False)
                       for i in chosen])


def rows_key(rows: list[Row]) -> str:
    """A hash of the rows judged: a changed split or data folder is judged again."""
    digest = hashlib.sha256()
    for r in rows:
        digest.update(json.dumps([r.id, r.claim, [p.text for p in r.passages], r.label]).encode())
    return digest.hexdigest()[:16]


def model_outputs(rows: list[Row], cache: Path) -> list[dict]:
    """Per row: the guard-off label, scores and evidence text of the model judge (cached)."""
    from citeaudit.judges.model import ModelJudge

    judge = ModelJudge(guard=False)  # what is cached is the guard-off judgment: a new guard reuses it
    key = f"{judge.signature}|{rows_key(rows)}"
    path = cache / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))["rows"]
    started = time.perf_counter()
    requests = [Request.of(r.claim, r.passages) for r in rows]
    out = []
    for i in range(0, len(requests), 32):
        chunk = requests[i:i + 32]
        for r, j in zip(chunk, judge.judge_batch(chunk, guard=False)):
            out.append({"label": j.label, "scores": j.scores or {}, "evidence": judge.evidence_text(r, j)})
        print(f"  judged {len(out)}/{len(rows)} rows", file=sys.stderr)
    print(f"model judged {len(rows)} rows in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"key": key, "rows": out}, ensure_ascii=False), encoding="utf-8")
    return out


def _module_at(revision: str, path: str, name: str, package: str, renames: dict[str, str]) -> types.ModuleType:
    """The module at `path` as it was at `revision` (read with `git show`), loaded as `name`, with the
    imports of `renames` pointing at other such modules."""
    source = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    for old, new in renames.items():
        source = source.replace(f"from {old} import", f"from {new} import")
    module = types.ModuleType(name)
    module.__package__ = package
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return module


def baseline_check(revision: str) -> Check:
    """guard.check as it was at `revision`, with the number reading (quantities.py) of that revision when
    it had one, run beside today's."""
    renames = {}
    listed = subprocess.run(["git", "ls-tree", "--name-only", revision, "src/citeaudit/quantities.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    if listed.strip():
        _module_at(revision, "src/citeaudit/quantities.py", "citeaudit._quantities_baseline", "citeaudit", {})
        renames["citeaudit.quantities"] = "citeaudit._quantities_baseline"
    return _module_at(revision, "src/citeaudit/judges/guard.py", "citeaudit.judges._guard_baseline",
                      "citeaudit.judges", renames).check


def bacc(rows: list[Row], full: list[bool]) -> float:
    return balanced_accuracy([r.label == "full" for r in rows], full)


def firings(rows: list[Row], outputs: list[dict], check: Check, only_full: bool) -> list[tuple[int, str]]:
    """(row index, finding kind) of every pair the check fires on (the model's fulls, or every pair)."""
    fired = []
    for i, (r, o) in enumerate(zip(rows, outputs)):
        if only_full and o["label"] != "full":
            continue
        finding = check(r.claim, o["evidence"])
        if finding is not None:
            fired.append((i, finding.kind))
    return fired


def rule_line(name: str, rows: list[Row], fired: list[int], base: list[bool] | None) -> str:
    right = sum(rows[i].label != "full" for i in fired)
    precision = f"{right / len(fired):.2f}" if fired else "-"
    line = f"| {name} | {len(fired)} | {right} | {precision} |"
    if base is not None:
        silenced = set(fired)
        on = [b and i not in silenced for i, b in enumerate(base)]
        line += f" {bacc(rows, on) - bacc(rows, base):+.3f} |"
    return line


def guard_table(rows: list[Row], base: list[bool], guards: dict[str, list[int]]) -> list[str]:
    sources = sorted({r.source or "(unset)" for r in rows})
    lines = ["| guard | fired | right | precision | BAcc | " + " | ".join(sources) + " |",
             "|---|---|---|---|---|" + "---|" * len(sources)]
    for name, fired in guards.items():
        stopped = set(fired)
        on = [b and i not in stopped for i, b in enumerate(base)]
        right = sum(rows[i].label != "full" for i in fired)
        cells = []
        for s in sources:
            ix = [i for i, r in enumerate(rows) if (r.source or "(unset)") == s]
            cells.append(f"{bacc([rows[i] for i in ix], [on[i] for i in ix]):.3f}")
        precision = f"{right / len(fired):.2f}" if fired else "-"
        lines.append(f"| {name} | {len(fired)} | {right} | {precision} | {bacc(rows, on):.3f} | "
                     + " | ".join(cells) + " |")
    return lines


def changes(rows: list[Row], outputs: list[dict], before: Check, after: Check, only_full: bool) -> list[str]:
    """Pairs one guard fires on and the other does not, by the kind of finding: a misfire removed is a
    gold-full pair the old guard fired on; a catch lost is a gold not-full one."""
    counts: dict[tuple[str, str], list[int]] = {}
    for i, (r, o) in enumerate(zip(rows, outputs)):
        if only_full and o["label"] != "full":
            continue
        old, new = before(r.claim, o["evidence"]), after(r.claim, o["evidence"])
        if (old is None) == (new is None):
            continue
        change = ("fires now", new.kind) if old is None else ("quiet now", old.kind)
        counts.setdefault(change, [0, 0])[r.label == "full"] += 1
    lines = ["| change | kind | gold full | gold not full |", "|---|---|---|---|"]
    for (change, kind), (not_full, full) in sorted(counts.items()):
        lines.append(f"| {change} | {kind} | {full} | {not_full} |")
    return lines


def print_rule_table(rules, rows, outputs, base=None) -> None:
    """One line per rule run alone: on the model's fulls when `base` (the guard-off labels) is given,
    with the change in BAcc; else on every pair."""
    with_bacc = base is not None
    print("| rule | fired | right | precision |" + (" BAcc |" if with_bacc else "")
          + "\n|---|---|---|---|" + ("---|" if with_bacc else ""))
    for rule in rules:
        fired = [i for i, _ in firings(rows, outputs, lambda c, e: guard.check(c, e, rules={rule}), with_bacc)]
        name = rule + (" (tried, off)" if with_bacc and rule in guard.TRIED_RULES else "")
        print(rule_line(name, rows, fired, base))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--source", choices=sorted(NLI_HELD_OUT),
                    help="measure on a held-out NLI file instead of a split (no train tables)")
    ap.add_argument("--rows", type=int, default=2000, help="pairs drawn from --source (0: all)")
    ap.add_argument("--seed", type=int, default=0, help="the draw of --rows pairs")
    ap.add_argument("--rest", action="store_true", help="the pairs of --source that the draw leaves, instead")
    ap.add_argument("--lang", choices=("en", "zh"), help="only the rows of this language (the split's `lang`)")
    ap.add_argument("--data", help="the shared data folder (default: found as training.data finds it)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--baseline", default=BASELINE, help="git revision of the old guard")
    ap.add_argument("--show", metavar="RULE", help="list the model's fulls this rule fires on")
    args = ap.parse_args(argv)

    if args.source:
        rows = held_out(args.source, args.rows, args.seed, args.data, args.rest)
        name = f"{args.source} ({len(rows)} pairs, {'the rest of ' if args.rest else ''}seed {args.seed})"
    else:
        rows, name = split_of(args.split, args.data), args.split
    if args.lang:
        rows = [r for r in rows if r.lang == args.lang]
        name = f"{name}, {args.lang}"
    outputs = model_outputs(rows, args.cache)
    base = [o["label"] == "full" for o in outputs]
    rules = guard.RULES + guard.TRIED_RULES
    old_check = baseline_check(args.baseline)

    if args.show:
        for i, _ in firings(rows, outputs, lambda c, e: guard.check(c, e, rules={args.show}), True):
            finding = guard.check(rows[i].claim, outputs[i]["evidence"], rules={args.show})
            print(f"[{rows[i].label}] {rows[i].source} | {rows[i].claim}\n    {finding.reason}")
        return 0

    full_rows = [r for r, b in zip(rows, base) if b]
    print(f"{name}: {len(rows)} rows, {sum(r.label == 'full' for r in rows)} gold full; the model (guard off) "
          f"calls {len(full_rows)} full, of which {sum(r.label != 'full' for r in full_rows)} are gold not full\n")
    print("Each rule alone on the model's fulls (right = gold not full; BAcc = change from guard off):\n")
    print_rule_table(rules, rows, outputs, base)
    print(f"\nEach rule alone on every pair of {name}, whatever the model said "
          f"({sum(r.label != 'full' for r in rows)} of {len(rows)} gold not full):\n")
    print_rule_table(rules, rows, outputs)

    if not args.source:
        train = [r for r in split_of("train", args.data) if args.lang in (None, r.lang)]
        whole = [{"evidence": "\n".join(p.text for p in r.passages)} for r in train]
        print(f"\nEach rule alone on every pair of the train split, against all its cited passages, no model "
              f"({sum(r.label != 'full' for r in train)} of {len(train)} gold not full):\n")
        print_rule_table(rules, train, whole)
        print(f"\nWhere RULES and the guard of {args.baseline} disagree (by the kind of the finding), "
              "train pairs against all their passages:\n")
        print("\n".join(changes(train, whole, old_check, guard.check, False)))
    print(f"\nWhere RULES and the guard of {args.baseline} disagree on the model's fulls of {name}:\n")
    print("\n".join(changes(rows, outputs, old_check, guard.check, True)))

    old = firings(rows, outputs, old_check, True)
    print(f"\nThe guard of {args.baseline} on the model's fulls of {name}, by the kind of its first finding:\n")
    print("| kind | fired | right | precision |\n|---|---|---|---|")
    for kind in sorted({k for _, k in old}):
        print(rule_line(kind, rows, [i for i, k in old if k == kind], None))
    guards = {
        "off": [],
        f"{args.baseline}": [i for i, _ in old],
        "RULES": [i for i, _ in firings(rows, outputs, guard.check, True)],
    }
    if any(has_han(r.claim) for r in rows):  # Chinese claims run RULES_ZH unless told otherwise
        guards["RULES on Chinese claims too"] = [
            i for i, _ in firings(rows, outputs, lambda c, e: guard.check(c, e, rules=guard.RULES), True)]
    guards["RULES + TRIED_RULES"] = [i for i, _ in firings(rows, outputs,
                                                           lambda c, e: guard.check(c, e, rules=rules), True)]
    print("\nThe whole guard (BAcc, full vs the rest; fired and right on the model's fulls):\n")
    print("\n".join(guard_table(rows, base, guards)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
