"""Compare two runs (or two systems) side by side, with raw counts and the claims whose labels differ.

Two runs are compared only when their signatures agree on every field that changes figures (judge,
parser and claim splitter, the no-citation convention): a curated run beside an embedding run is a
comparison of judges, not of systems, and is refused unless asked for explicitly (`allow_mismatch`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ComparisonError, RunMismatch
from .metrics import names as N
from .report.results import RatioRecord, Ratios
from .runlog import RunLog

COMPARED = (N.CITATION_PRESENCE, N.SUPPORT, N.CITATION_RECALL, N.CITATION_PRECISION, N.COVERAGE, N.ABSTENTION)


@dataclass
class ClaimDiff:
    case: str
    text: str
    a: str | None  # label in A, None when A has no such claim
    b: str | None


@dataclass
class Comparison:
    name_a: str
    name_b: str
    rows: list[tuple[str, RatioRecord, RatioRecord]]
    reading: list[str]
    claims: list[ClaimDiff]
    mismatches: list[tuple[str, str | None, str | None]] = field(default_factory=list)  # compared anyway


def _summary(log: RunLog, system: str | None) -> Ratios:
    summary = log.results.summary
    if system is None:
        return summary.all
    if system not in summary.by_system:
        known = ", ".join(summary.by_system)
        raise ComparisonError(f"no system '{system}' in this run; systems: {known}")
    return summary.by_system[system]


def _claims(log: RunLog, system: str | None) -> dict[tuple[str, str], str]:
    """(case, claim text) -> label, for one system's answers (or all answers)."""
    out = {}
    for a in log.results.answers:
        if system is None or a.system == system:
            key_prefix = a.case if system is not None else f"{a.case}/{a.answer}"
            for c in a.claims:
                out[(key_prefix, c.text)] = c.label
    return out


def _fmt(r: RatioRecord) -> str:
    if r.value is None:
        return "n/a"
    num = r.numerator
    num = int(num) if float(num).is_integer() else round(num, 3)
    return f"{num}/{int(r.denominator)} ({100 * r.value:.1f} %)"


def _reading(a: Ratios, b: Ratios, na: str, nb: str) -> list[str]:
    """Plain sentences for the two figures that most often move apart: support and coverage."""
    lines = []
    sa, sb = a[N.SUPPORT], b[N.SUPPORT]
    if sa.value == sb.value:
        lines.append(f"same support ({_fmt(sa)} vs {_fmt(sb)})")
    else:
        unsup_a, unsup_b = sa.denominator - sa.numerator, sb.denominator - sb.numerator
        better, worse, d = (nb, na, unsup_a - unsup_b) if unsup_b < unsup_a else (na, nb, unsup_b - unsup_a)
        if d:
            lines.append(f"{better} makes {int(d)} fewer unsupported claim{'s' if d != 1 else ''} than {worse} "
                         f"(support {_fmt(sa)} vs {_fmt(sb)})")
        else:
            lines.append(f"support differs ({_fmt(sa)} vs {_fmt(sb)})")
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


def compare(log_a: RunLog, log_b: RunLog, system_a: str | None = None, system_b: str | None = None,
            name_a: str = "A", name_b: str = "B", allow_mismatch: bool = False) -> Comparison:
    """Side by side; refuses (RunMismatch) two runs whose signatures differ in a field that changes
    figures, unless `allow_mismatch`, when the differences are kept in `mismatches` and printed."""
    if (system_a is None) != (system_b is None):
        raise ComparisonError("give a system for both sides, or for neither")
    mismatches = log_a.signature.differences(log_b.signature)
    if mismatches and not allow_mismatch:
        raise RunMismatch(_mismatch_message(mismatches, name_a, name_b))
    a, b = _summary(log_a, system_a), _summary(log_b, system_b)
    rows = [(m, a[m], b[m]) for m in COMPARED if m in a and m in b]
    claims_a, claims_b = _claims(log_a, system_a), _claims(log_b, system_b)
    diffs = [ClaimDiff(k[0], k[1], claims_a.get(k), claims_b.get(k))
             for k in dict.fromkeys([*claims_a, *claims_b]) if claims_a.get(k) != claims_b.get(k)]
    return Comparison(name_a, name_b, rows, _reading(a, b, name_a, name_b), diffs, mismatches)


_FIELD_NAMES = {"judge": "judge", "parser": "parser", "claims": "claim splitter",
                "nocite": "precision without citations", "conventions": "conventions",
                "invalid": "invalid citations", "missing": "unlabelled pairs"}


def _differences(mismatches: list[tuple[str, str | None, str | None]], name_a: str, name_b: str) -> list[str]:
    return [f"  {_FIELD_NAMES[f]}: {name_a} {a or 'none'} · {name_b} {b or 'none'}" for f, a, b in mismatches]


def _mismatch_message(mismatches: list[tuple[str, str | None, str | None]], name_a: str, name_b: str) -> str:
    return "\n".join([
        "the two runs were scored differently, so their figures are not comparable:",
        *_differences(mismatches, name_a, name_b),
        "score both with the same judge and conventions, or pass --allow-mismatch to compare them anyway",
    ])


def format_comparison(c: Comparison) -> str:
    width = max(len(m) for m, _, _ in c.rows)
    out = []
    if c.mismatches:
        out += ["warning: compared although the runs were scored differently:",
                *_differences(c.mismatches, c.name_a, c.name_b), ""]
    out += [f"{'measure':{width}}  {c.name_a:>22}  {c.name_b:>22}"]
    out += [f"{m:{width}}  {_fmt(a):>22}  {_fmt(b):>22}" for m, a, b in c.rows]
    out += ["", "reading:"] + [f"  {line}" for line in c.reading]
    if c.claims:
        out += ["", "claims whose judgments differ:"]
        out += [f"  [{d.case}] {d.text}: {d.a or 'absent'} → {d.b or 'absent'}" for d in c.claims]
    return "\n".join(out)
