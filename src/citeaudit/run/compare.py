"""Compare two runs (or two systems) side by side: each figure with its raw counts and the difference
on the answers both runs have (a paired bootstrap interval), how far the two runs' labels agree on the
claims both make (Cohen's kappa, confusion), and the claims whose label changed, most consequential
first. Claims a judge left unsure are reported as such, apart: a run never reads as making fewer
unsupported claims because its judge was unsure of them.

A run scored with `--metrics` holds only the measures it asked for: a figure one run did not measure
reads "not measured in this run" on its side, with no difference, and its sentence in the reading says so.

Two runs are compared only when their signatures agree on every field that changes figures (judge,
parser and claim splitter, the no-citation convention): a curated run beside an embedding run is a
comparison of judges, not of systems, and is refused unless asked for explicitly (`allow_mismatch`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from citeaudit.run.agree import MIN_PAIRS, figures
from citeaudit.errors import ComparisonError, RunMismatch
from citeaudit.metrics import names as N
from citeaudit.metrics.ratio import format_interval, format_percent
from citeaudit.metrics.scoring import UNCERTAIN, UNJUDGED, by_rule
from citeaudit.records import LABELS
from citeaudit.run.results import AnswerRecord, RatioRecord, Ratios
from citeaudit.run.log import RunLog
from citeaudit.intervals import WIDENED, what_was_drawn
from citeaudit.stats import MIN_GROUPS, RESAMPLES, SEED, connected_groups, drawing, paired_ratio_differences

COMPARED = N.ANSWER_MEASURES


# How much a changed label matters, 0 most: a claim that moves between supported and contradicted, then
# between supported and unsupported (each moves the support figure), then a contradiction that appears
# or goes, then partial against none; after those a verdict against no verdict (uncertain, unjudged),
# and last a claim only one run makes.
CHANGE_RANKS = {
    frozenset({"full", "contradicts"}): 0,
    frozenset({"full", "none"}): 1,
    frozenset({"full", "partial"}): 2,
    frozenset({"partial", "contradicts"}): 3,
    frozenset({"none", "contradicts"}): 3,
    frozenset({"partial", "none"}): 4,
}
NO_VERDICT_RANK = 5
ONE_RUN_RANK = 6


def change_rank(a: str | None, b: str | None) -> int:
    """How much a label change from `a` to `b` matters (0 most; None: the run has no such claim)."""
    if a is None or b is None:
        return ONE_RUN_RANK
    return CHANGE_RANKS.get(frozenset({a, b}), NO_VERDICT_RANK)


@dataclass
class ClaimDiff:
    case: str
    text: str
    a: str | None  # label in A, None when A has no such claim
    b: str | None
    where_a: str | None = None  # "case/answer claim 2.1" in A
    where_b: str | None = None
    weight: float = 0.0  # the claim's share of its answer's claims (the larger of the two runs)

    @property
    def rank(self) -> int:
        return change_rank(self.a, self.b)


@dataclass(frozen=True)
class Difference:
    """B's figure minus A's on the answers both runs have, with its paired bootstrap interval."""

    value: float | None
    interval: tuple[float, float] | None


@dataclass
class Comparison:
    name_a: str
    name_b: str
    rows: list[tuple[str, RatioRecord | None, RatioRecord | None]]  # None: the run did not measure it
    reading: list[str]
    claims: list[ClaimDiff]  # most consequential change first
    mismatches: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # compared anyway
    differences: dict[str, Difference] = field(default_factory=dict)
    answers: tuple[int, int, int] = (0, 0, 0)  # answers of A, of B, and paired (in both)
    agreement: dict[str, Any] = field(default_factory=dict)  # on the claims both runs judged
    resamples: int = RESAMPLES
    seed: int = SEED
    # claims left unsure in each run, and those one run left unsure and the other judged (by its label)
    unsure: dict[str, Any] = field(default_factory=dict)


def _summary(log: RunLog, system: str | None) -> Ratios:
    summary = log.results.summary
    if system is None:
        return summary.all
    if system not in summary.by_system:
        known = ", ".join(summary.by_system)
        raise ComparisonError(f"no system '{system}' in this run; systems: {known}")
    return summary.by_system[system]


def _answers(log: RunLog, system: str | None) -> dict[tuple[str, str | int], AnswerRecord]:
    """The answers compared, keyed for pairing: by case and answer id for a whole run; by case (and
    place among that system's answers to it) for one system, whose answer ids name the system."""
    out: dict[tuple[str, str | int], AnswerRecord] = {}
    seen: dict[str, int] = {}
    for a in log.results.answers:
        if system is None:
            out[(a.case, a.answer)] = a
        elif a.system == system:
            seen[a.case] = seen.get(a.case, -1) + 1
            out[(a.case, seen[a.case])] = a
    return out


@dataclass(frozen=True)
class _Claim:
    label: str
    where: str
    weight: float
    by_rule: bool = False  # labelled by a rule (it cites nothing, or names no passage): no judge was asked


def _claims(log: RunLog, system: str | None) -> dict[tuple[str, str], _Claim]:
    """(case, claim text) -> the claim's label, place and weight, for one system's answers (or all
    answers, keyed by case/answer)."""
    out = {}
    for a in log.results.answers:
        if system is None or a.system == system:
            key_prefix = a.case if system is not None else f"{a.case}/{a.answer}"
            for c in a.claims:
                where = f"{a.case}/{a.answer} claim {c.statement + 1}.{c.index + 1}"
                out[(key_prefix, c.text)] = _Claim(c.label, where, 1 / len(a.claims), by_rule(c.judgment))
    return out


def run_name(path: str, log: RunLog, system: str | None) -> str:
    """What to call a run: the system compared, the run's only system, else its file name."""
    if system is not None:
        return system
    systems = list(log.results.by_system())
    return systems[0] if len(systems) == 1 else Path(path).name


def run_names(path_a: str, log_a: RunLog, system_a: str | None, path_b: str, log_b: RunLog,
              system_b: str | None) -> tuple[str, str]:
    """Two names that tell the runs apart: the system or file name, then with the file's name or path."""
    a, b = run_name(path_a, log_a, system_a), run_name(path_b, log_b, system_b)
    for qualify in (lambda name, path: name, lambda name, path: f"{name} ({Path(path).name})",
                    lambda name, path: f"{name} ({path})"):
        qa, qb = qualify(a, path_a), qualify(b, path_b)
        if qa != qb:
            return qa, qb
    return f"{a} (first)", f"{b} (second)"


def _fmt(r: RatioRecord | None) -> str:
    if r is None:
        return N.NOT_MEASURED
    if r.value is None:
        return "n/a"
    ratio = r.ratio()
    return f"{ratio.counts()} ({ratio.percent()})"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _unmeasured(measure: str, a: Ratios, b: Ratios, na: str, nb: str) -> str | None:
    """The sentence for a measure one run (or both) did not measure; None when both did."""
    measured = [(name, figures[measure]) for name, figures in ((na, a), (nb, b)) if measure in figures]
    if len(measured) == 2:
        return None
    if not measured:
        return f"{measure} not measured in either run"
    (name, figure), = measured
    return f"{measure} not measured in {nb if name == na else na} ({name}: {_fmt(figure)})"


def _reading(a: Ratios, b: Ratios, na: str, nb: str, unsure: dict[str, Any]) -> list[str]:
    """Plain sentences for the two figures that most often move apart: support and coverage. Claims a
    run left unsure are in neither run's support, so a run never reads as making fewer unsupported
    claims because it left them unsure: with some, only a gap they cannot close counts (see _support).
    A figure a run did not measure is said to be so, never compared."""
    lines = [_unmeasured(N.SUPPORT, a, b, na, nb)
             or _support(a[N.SUPPORT], b[N.SUPPORT], na, nb, unsure["a"], unsure["b"])]
    if unsure["a"] or unsure["b"]:
        lines.append(f"claims left unsure, in no figure: {unsure['a']} in {na}, {unsure['b']} in {nb}")
        for who, other, labels in ((nb, na, unsure["b_unsure_a_judged"]), (na, nb, unsure["a_unsure_b_judged"])):
            n = sum(labels.values())
            if n:
                full = labels.get("full", 0)
                lines.append(f"{who} left {_plural(n, 'claim')} unsure that {other} judged "
                             f"({other}: {full} supported, {n - full} not)")
    missing = _unmeasured(N.COVERAGE, a, b, na, nb)
    if missing:
        return [*lines, missing]
    ca, cb = a[N.COVERAGE], b[N.COVERAGE]
    if ca.value == cb.value:
        lines.append(f"same coverage ({_fmt(ca)} vs {_fmt(cb)})")
    elif ca.numerator and cb.numerator and max(ca.numerator, cb.numerator) % min(ca.numerator, cb.numerator) == 0:
        more, less = (nb, na) if cb.numerator > ca.numerator else (na, nb)
        times = int(max(ca.numerator, cb.numerator) // min(ca.numerator, cb.numerator))
        lines.append(f"{more} conveys {times} times the required facts of {less} (coverage {_fmt(ca)} vs {_fmt(cb)})")
    else:
        more = nb if (cb.value or 0) > (ca.value or 0) else na
        lines.append(f"{more} covers more required facts (coverage {_fmt(ca)} vs {_fmt(cb)})")
    return lines


def _support(sa: RatioRecord, sb: RatioRecord, na: str, nb: str, ua: int, ub: int) -> str:
    """The support sentence. Without unsure claims, the difference in unsupported claims. With some, a
    run's unsupported claims lie between those judged unsupported and those plus its unsure ones: one
    run makes fewer only when its most is below the other's least, and by at least that gap."""
    figures = f"support {_fmt(sa)} vs {_fmt(sb)}"
    unsup_a, unsup_b = int(sa.denominator - sa.numerator), int(sb.denominator - sb.numerator)
    if not (ua or ub):
        if sa.value == sb.value:
            return f"same support ({_fmt(sa)} vs {_fmt(sb)})"
        better, worse, d = (nb, na, unsup_a - unsup_b) if unsup_b < unsup_a else (na, nb, unsup_b - unsup_a)
        if d:
            return f"{better} makes {_plural(d, 'fewer unsupported claim')} than {worse} ({figures})"
        return f"support differs ({figures})"
    for better, worse, gap in ((nb, na, unsup_a - unsup_b - ub), (na, nb, unsup_b - unsup_a - ua)):
        if gap > 0:
            return (f"{better} makes at least {_plural(gap, 'fewer unsupported claim')} than {worse}, even if "
                    f"every claim left unsure is unsupported ({figures}, judged claims only)")
    return (f"{_plural(unsup_a, 'claim')} judged unsupported in {na}, {unsup_b} in {nb}, but the claims left "
            f"unsure could change that: neither is shown to make fewer unsupported claims ({figures}, judged "
            "claims only)")


def compare(log_a: RunLog, log_b: RunLog, system_a: str | None = None, system_b: str | None = None,
            name_a: str = "A", name_b: str = "B", allow_mismatch: bool = False, resamples: int = RESAMPLES,
            seed: int = SEED) -> Comparison:
    """Side by side; refuses (RunMismatch) two runs whose signatures differ in a field that changes
    figures, unless `allow_mismatch`, when the differences are kept in `mismatches` and printed.

    Each measure's difference (B minus A) is taken on the answers both runs have, with a paired
    bootstrap interval (`resamples` resamples of those answers, `seed` fixed); the labels of the
    claims both runs make are compared with Cohen's kappa and a confusion table, their intervals drawing
    the claims of an answer together (from 2 to 19 answers, the span of a jackknife over them and the
    claims drawn one by one); the claims whose label changed come most consequential first
    (CHANGE_RANKS), then by their share of their answer."""
    if (system_a is None) != (system_b is None):
        raise ComparisonError("give a system for both sides, or for neither")
    mismatches = log_a.signature.differences(log_b.signature)
    if mismatches and not allow_mismatch:
        raise RunMismatch(_mismatch_message(mismatches, "A", "B", (name_a, name_b)))
    a, b = _summary(log_a, system_a), _summary(log_b, system_b)
    rows = [(m, a.get(m), b.get(m)) for m in COMPARED if m in a or m in b]
    answers_a, answers_b = _answers(log_a, system_a), _answers(log_b, system_b)
    paired = [k for k in answers_a if k in answers_b]
    differences = _differences_of(rows, [answers_a[k] for k in paired], [answers_b[k] for k in paired],
                                  resamples, seed)
    claims_a, claims_b = _claims(log_a, system_a), _claims(log_b, system_b)
    diffs = [_diff(k, claims_a.get(k), claims_b.get(k)) for k in dict.fromkeys([*claims_a, *claims_b])]
    diffs = [d for d in diffs if d.a != d.b]
    diffs.sort(key=lambda d: (d.rank, -d.weight))  # stable: run order within a rank and weight
    unsure = _unsure(claims_a, claims_b, answers_a.values(), answers_b.values())
    return Comparison(name_a, name_b, rows, _reading(a, b, name_a, name_b, unsure), diffs, mismatches, differences,
                      (len(answers_a), len(answers_b), len(paired)),
                      _label_agreement(claims_a, claims_b, resamples, seed), resamples, seed, unsure)


def _unsure(claims_a: dict[tuple[str, str], _Claim], claims_b: dict[tuple[str, str], _Claim],
            answers_a: Iterable[AnswerRecord], answers_b: Iterable[AnswerRecord]) -> dict[str, Any]:
    """The claims each run left unsure (`a`, `b`), and of the claims both make, those one run left unsure
    and the other judged, counted by the other run's label."""
    def judged_where_unsure(unsure: dict, judged: dict) -> dict[str, int]:
        found = Counter(judged[k].label for k, c in unsure.items()
                        if c.label == UNCERTAIN and k in judged and judged[k].label in LABELS)
        return {label: found[label] for label in LABELS if found[label]}

    return {"a": sum(x.labels.get(UNCERTAIN, 0) for x in answers_a),
            "b": sum(x.labels.get(UNCERTAIN, 0) for x in answers_b),
            "a_unsure_b_judged": judged_where_unsure(claims_a, claims_b),
            "b_unsure_a_judged": judged_where_unsure(claims_b, claims_a)}


def _diff(key: tuple[str, str], a: _Claim | None, b: _Claim | None) -> ClaimDiff:
    return ClaimDiff(key[0], key[1], a.label if a else None, b.label if b else None, a.where if a else None,
                     b.where if b else None, max(a.weight if a else 0.0, b.weight if b else 0.0))


def _differences_of(rows: list[tuple[str, RatioRecord | None, RatioRecord | None]], paired_a: list[AnswerRecord],
                    paired_b: list[AnswerRecord], resamples: int, seed: int) -> dict[str, Difference]:
    """Each summed measure's B − A on the paired answers, recomputed from their counts (none for a
    measure one run did not measure)."""
    if not paired_a:
        return {m: Difference(None, None) for m, _, _ in rows}
    everywhere = set.intersection(*(set(x.metrics) for x in (*paired_a, *paired_b)))
    measures = [m for m, ra, rb in rows if ra and rb and ra.kind == rb.kind == "ratio" and m in everywhere]
    records = [[[x.metrics[m] for m in measures] for x in answers] for answers in (paired_a, paired_b)]
    counts = [[[r.numerator for r in row] for row in side] for side in records]
    totals = [[[r.denominator for r in row] for row in side] for side in records]
    # one pair gives every resample the same difference: no interval to speak of
    resamples = resamples if len(paired_a) > 1 else 0
    found = paired_ratio_differences(counts[0], totals[0], counts[1], totals[1], resamples, seed) if measures else []
    return {m: Difference(value, interval) for m, (value, interval) in zip(measures, found)}


# Why a claim both runs make is left out of their agreement, in the order the reasons are tried: a label
# no judge gave (a rule's: the claim cites nothing, or names no passage), no judgment, an unsure one.
RULE = "rule"
NOT_COUNTED_REASONS = {RULE: "labelled by a rule in a run (it cites nothing, or names no passage: no judge "
                             "was asked)",
                       UNJUDGED: "unjudged in a run", UNCERTAIN: "left unsure in a run"}


def _left_out(a: _Claim, b: _Claim) -> str | None:
    """Why a claim both runs make is no pair of verdicts to agree on; None when both judges judged it."""
    if a.by_rule or b.by_rule:
        return RULE
    return next((reason for reason in (UNJUDGED, UNCERTAIN) if reason in (a.label, b.label)), None)


def _label_agreement(claims_a: dict[tuple[str, str], _Claim], claims_b: dict[tuple[str, str], _Claim],
                     resamples: int, seed: int) -> dict[str, Any]:
    """Agreement of the two runs' labels on the claims both runs' judges judged (the figures of
    agree.py, with A in the rows). A claim a rule labelled in either run (two rules agree, whatever the
    judges), or that either run left unjudged or unsure, is counted apart, by reason."""
    shared = [k for k in claims_a if k in claims_b]
    reasons = Counter(_left_out(claims_a[k], claims_b[k]) for k in shared)
    counted = [k for k in shared if _left_out(claims_a[k], claims_b[k]) is None]
    # the claims of one answer are judged on the same passages: a resample draws the answer whole, as the
    # differences above draw answers (by its key's first part: case/answer, or the case for one system)
    groups, drawn = drawing("groups", "claim", len(counted), lambda: connected_groups([[k[0]] for k in counted]))
    found = figures([claims_a[k].label for k in counted], [claims_b[k].label for k in counted], resamples, seed,
                    groups=groups)
    kept = ("n", "agree", "agreement", "agreement_ci", "kappa", "kappa_ci", "confusion")
    undefined = f"needs at least {MIN_PAIRS} claims judged in both runs; {len(counted)} here"
    return {**{k: found[k] for k in kept}, "undefined": undefined if found["undefined"] else None,
            "shared_claims": len(shared), "not_counted": len(shared) - len(counted),
            "not_counted_by_reason": {r: reasons[r] for r in NOT_COUNTED_REASONS if reasons[r]},
            "resampling": drawn}


_FIELD_NAMES = {"judge": "judge", "parser": "parser", "claims": "claim splitter",
                "cite": "citations given by the reader",
                "nocite": "precision without citations", "conventions": "conventions",
                "invalid": "invalid citations", "missing": "unlabelled pairs"}


def _differences(mismatches: list[tuple[str, str | None, str | None]], name_a: str, name_b: str) -> list[str]:
    return [f"  {_FIELD_NAMES[f]}: {name_a} {a or 'none'} · {name_b} {b or 'none'}" for f, a, b in mismatches]


def _mismatch_message(mismatches: list[tuple[str, str | None, str | None]], name_a: str, name_b: str,
                      runs: tuple[str, str] | None = None) -> str:
    named = f" ({name_a}: {runs[0]} · {name_b}: {runs[1]})" if runs and runs != (name_a, name_b) else ""
    return "\n".join([
        f"the two runs were scored differently{named}, so their figures are not comparable:",
        *_differences(mismatches, name_a, name_b),
        "score both with the same judge and conventions, or pass --allow-mismatch to compare them anyway",
    ])


def _points(value: float) -> str:
    return f"{100 * value:+.1f}".replace("-", "−")


def _difference_cell(d: Difference | None) -> str:
    if d is None or d.value is None:
        return "n/a"
    interval = f" [{_points(d.interval[0])}, {_points(d.interval[1])}]" if d.interval else ""
    return f"{_points(d.value)} points{interval}"


def _confusion_lines(table: dict[str, dict[str, int]], name_a: str, name_b: str) -> list[str]:
    width = max(len(label) for label in LABELS) + 2
    lines = [f"  confusion (rows: {name_a}, columns: {name_b}):", "  " + " " * width + "".join(
        f"{label:>{width}}" for label in LABELS)]
    return lines + ["  " + f"{g:<{width}}" + "".join(f"{table[g][p]:>{width}}" for p in LABELS) for g in LABELS]


def _agreement_lines(c: Comparison) -> list[str]:
    g = c.agreement
    if not g:
        return []
    reasons = ", ".join(f"{n} {NOT_COUNTED_REASONS[r]}" for r, n in g["not_counted_by_reason"].items())
    apart = f"; {g['not_counted']} left out: {reasons}" if g["not_counted"] else ""
    head = f"labels of the {g['shared_claims']} claims both runs make ({g['n']} judged in both{apart}):"
    if g["undefined"]:
        return ["", head, f"  n/a: {g['undefined']}"]
    share = f"{g['agree']}/{g['n']} agree ({format_percent(g['agreement'])}"
    share += f", 95 % {format_interval(*g['agreement_ci'])})" if g["agreement_ci"] else ")"
    kappa = "n/a" if g["kappa"] is None else f"{g['kappa']:.3f}" + (
        f" [{g['kappa_ci'][0]:.3f}, {g['kappa_ci'][1]:.3f}]" if g["kappa_ci"] else "")
    drawn = what_was_drawn(g.get("resampling"), "claim", ("an answer", "answers"))
    return ["", head, f"  {share} · Cohen's kappa {kappa}", *([f"  intervals: bootstrap{drawn}"] if drawn else []),
            *_confusion_lines(g["confusion"], c.name_a, c.name_b)]


CLAIMS_SHOWN = 20  # changed claims the text lists unless asked for every one


def _claim_line(d: ClaimDiff) -> str:
    where = " | ".join(dict.fromkeys(w for w in (d.where_a, d.where_b) if w))
    return f"  {d.a or 'absent'} → {d.b or 'absent'}  [{where}] {d.text}"


def format_comparison(c: Comparison, every_claim: bool = False) -> str:
    """The comparison as text: each measure beside its difference and interval, a plain reading, the
    label agreement, and the changed claims (the first CLAIMS_SHOWN unless `every_claim`)."""
    out = []
    if c.mismatches:
        out += ["warning: compared although the runs were scored differently:",
                *_differences(c.mismatches, c.name_a, c.name_b), ""]
    n_a, n_b, paired = c.answers
    heads = ("measure", f"{c.name_a} ({_plural(n_a, 'answer')})", f"{c.name_b} ({_plural(n_b, 'answer')})",
             f"{c.name_b} − {c.name_a} on {paired} paired {'answer' if paired == 1 else 'answers'} [95 %]")
    cells = [(m, _fmt(a), _fmt(b), _difference_cell(c.differences.get(m))) for m, a, b in c.rows]
    widths = [max(len(row[i]) for row in (heads, *cells)) for i in range(3)]
    out += ["  ".join(f"{x:<{w}}" for x, w in zip(row[:3], widths)) + "  " + row[3] for row in (heads, *cells)]
    unpaired = (n_a - paired, n_b - paired)
    out.append(f"differences: paired bootstrap over the answers both runs have ({c.resamples} resamples, "
               f"seed {c.seed}; from 2 to {MIN_GROUPS - 1} answers, {WIDENED}); answers "
               "pair by case and answer id (by case with --a-system/--b-system)")
    if any(unpaired):
        out.append(f"  {unpaired[0]} answers of {c.name_a} and {unpaired[1]} of {c.name_b} have no pair: they count in "
                   "the figures but not in the differences")
    out += ["", "reading:"] + [f"  {line}" for line in c.reading]
    out += _agreement_lines(c)
    changed = [d for d in c.claims if d.rank < ONE_RUN_RANK]
    if changed:
        shown = changed if every_claim else changed[:CLAIMS_SHOWN]
        more = "" if len(shown) == len(changed) else f"; {len(changed) - len(shown)} more with --details"
        out += ["", f"claims whose label changed, most consequential first ({len(changed)}{more}):"]
        out += [_claim_line(d) for d in shown]
    alone = [d for d in c.claims if d.rank == ONE_RUN_RANK]
    if alone:
        only_a = sum(d.b is None for d in alone)
        out += ["", f"claims only one run makes: {only_a} only in {c.name_a}, {len(alone) - only_a} only in "
                f"{c.name_b}" + (":" if every_claim else " (listed with --details)")]
        out += [_claim_line(d) for d in alone] if every_claim else []
    return "\n".join(out)


def _figure_json(r: RatioRecord | None) -> dict[str, Any]:
    return N.not_measured_json() if r is None else r.model_dump()


def comparison_json(c: Comparison) -> dict[str, Any]:
    """The comparison as `compare --format json` prints it."""
    n_a, n_b, paired = c.answers
    return {
        "a": c.name_a, "b": c.name_b,
        "signature_mismatches": [{"field": f, "a": a, "b": b} for f, a, b in c.mismatches],
        "answers": {"a": n_a, "b": n_b, "paired": paired},
        "measures": {m: {"a": _figure_json(a), "b": _figure_json(b),
                         "difference": asdict(c.differences[m]) if m in c.differences else None}
                     for m, a, b in c.rows},
        "bootstrap": {"paired_by": "answers", "resamples": c.resamples, "seed": c.seed, "level": 0.95},
        "reading": c.reading,
        "unsure": c.unsure,
        "agreement": c.agreement,
        "claims": [{**asdict(d), "rank": d.rank} for d in c.claims],
    }
