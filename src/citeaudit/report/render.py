"""Render a run's results (report/results.py) as Markdown or a terminal table. Every figure shows its
raw counts and a bootstrap interval, and every measure's signature is printed once, under the figures
(sacrebleu's footnote habit): in Markdown whole, on the terminal as the judge once and the run's shared
settings once (the judge's signature alone can be hundreds of characters, the same in nearly every
measure's), whole only when asked. Scoring and `report` render the same records, so a report never
recomputes a figure: the intervals resample the per-answer counts the results keep.

Both renderings put the summary first (one table per system), then the answers. Markdown carries
every answer; the terminal shows the answers with the lowest support unless asked for every one, and
when it prints to a file or a pipe nothing is cut to fit a width. A headline measure the run did not
measure (`--metrics` chose others) has its row in each system's table, saying so."""

from __future__ import annotations

import html
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from citeaudit.metrics import names as N
from citeaudit.metrics.ratio import Ratio, format_interval
from citeaudit.metrics.scoring import UNCERTAIN, UNJUDGED
from citeaudit.metrics.signature import Signature
from citeaudit.records import LABELS
from citeaudit.intervals import WIDENED
from citeaudit.stats import MIN_GROUPS, RESAMPLES, SEED, ratio_intervals
from citeaudit.text import visible_controls
from citeaudit.run.diagnose import AREAS
from citeaudit.run.results import AnswerRecord, CaseRecord, Finding, Ratios, Results, Summary, answer_json, to_json

__all__ = ["WORST", "answer_json", "diagnosis_markdown", "print_text", "report_json", "signatures",
           "summary_tables", "terminal_console", "text_report", "to_json", "to_markdown", "worst_answers"]

TABLE_MEASURES = (N.CITATION_PRESENCE, N.SUPPORT, N.CITATION_RECALL, N.CITATION_PRECISION, N.COVERAGE)
SUMMARY_MEASURES = N.ANSWER_LEVEL
HEADERS = {
    N.CITATION_PRESENCE: "citation presence",
    N.SUPPORT: "support S",
    N.CITATION_RECALL: "citation recall",
    N.CITATION_PRECISION: "citation precision",
    N.COVERAGE: "coverage U",
    N.ABSTENTION: "abstained",
    N.ALCE_CITATION_RECALL: "ALCE recall (mean)",
    N.ALCE_CITATION_PRECISION: "ALCE precision (mean)",
    N.INVALID_CITATIONS: "invalid citations",
    N.PREDICTED_SUPPORT_PRECISION: "predicted supported: precision",
    N.PREDICTED_SUPPORT_RECALL: "predicted supported: recall",
}
# The terminal shows this many answers, those with the lowest support, unless asked for every one.
WORST = 10
RANK_RULE = "even counting unsure claims as supported"  # worst_key's rule, as the heading says it
INTERVAL_NOTE = (f"95 % intervals: bootstrap over the items counted, {RESAMPLES} resamples, seed {SEED}; from 2 "
                 f"to {MIN_GROUPS - 1} items, {WIDENED}")


def signatures(results: Results | Summary, signature: Signature) -> list[tuple[str, str]]:
    summary = results.summary if isinstance(results, Results) else results
    names = list(summary.retrieval) + [n for n in SUMMARY_MEASURES if n in summary.all]
    return [(n, signature.render(n)) for n in names]


def _retrieval_line(ratios: Ratios) -> str:
    return " · ".join(f"{name} {record.ratio()}" for name, record in ratios.items())


LABELS_HEADER = "full/partial/none/contradicts"
APART = (UNCERTAIN, UNJUDGED)  # claims counted beside the four labels, never as one of them


def _label_cell(counts: dict[str, int]) -> str:
    cell = "/".join(str(counts.get(label, 0)) for label in LABELS)
    apart = [f"+{counts[label]} {label}" for label in APART if counts.get(label)]
    return f"{cell} ({', '.join(apart)})" if apart else cell


# --- the summary ---------------------------------------------------------------------------------------


@dataclass
class SummaryRow:
    measure: str
    figure: Ratio | None  # None: the run did not measure it
    interval: tuple[float, float] | None  # None: undefined, a mean, or nothing to resample

    @property
    def shown(self) -> str:
        return N.NOT_MEASURED if self.figure is None else str(self.figure)


@dataclass
class SummaryTable:
    """The figures of one system (or of every answer, or of retrieval over the cases)."""

    title: str
    items: int
    unit: str  # "answer" or "case"
    rows: list[SummaryRow]
    labels: dict[str, int] | None  # claims per label; None for retrieval

    @property
    def heading(self) -> str:
        return f"{self.title} · {self.items} {self.unit}{'s' if self.items != 1 else ''}"


class ItemCounts:
    """Each item's numerator and denominator of every measure (an item: an answer, or a case for
    retrieval), kept compactly for the summary's intervals: a run of 10^5 answers holds arrays of
    numbers, not its records."""

    def __init__(self) -> None:
        self.n = 0
        self.columns: dict[str, tuple[array, array]] = {}
        self.partial: set[str] = set()  # measures some item lacks: no interval for them

    def add(self, ratios: Ratios) -> None:
        for name in self.columns.keys() - ratios.keys():
            self.partial.add(name)
        for name, r in ratios.items():
            if name not in self.columns:
                self.columns[name] = (array("d"), array("d"))
                if self.n:
                    self.partial.add(name)
            nums, dens = self.columns[name]
            nums.append(r.numerator)
            dens.append(r.denominator)
        self.n += 1

    def complete(self, name: str) -> bool:
        return name in self.columns and name not in self.partial


class SummaryCounter:
    """What the summary tables need besides the summary itself, gathered one case at a time: each
    system's answers' counts and label counts, every answer's counts, and the cases' retrieval counts."""

    def __init__(self) -> None:
        self.systems: dict[str, tuple[ItemCounts, Counter]] = {}
        self.every = ItemCounts()
        self.cases = ItemCounts()

    def add(self, case: CaseRecord, answers: Iterable[AnswerRecord]) -> None:
        self.cases.add(case.retrieval)
        for a in answers:
            counts, labels = self.systems.setdefault(a.system, (ItemCounts(), Counter()))
            counts.add(a.metrics)
            labels.update(a.labels)
            self.every.add(a.metrics)

    @classmethod
    def of(cls, results: Results) -> SummaryCounter:
        counter = cls()
        answers = {c.id: [] for c in results.cases}
        for a in results.answers:
            answers.setdefault(a.case, []).append(a)
        for case in results.cases:
            counter.add(case, answers[case.id])
        for case_id in answers.keys() - {c.id for c in results.cases}:  # answers of no listed case
            counter.add(CaseRecord(id=case_id, question="", origin="", retrieval={}), answers[case_id])
        return counter


def _table(title: str, unit: str, figures: Ratios, items: ItemCounts, labels: dict[str, int] | None,
           order: list[str]) -> SummaryTable:
    """One summary table; each summed figure's interval resamples the items' own counts. A table of
    answers names every headline measure: those the run did not measure say so."""
    names = [m for m in order if m in figures]
    # one item gives every resample the same figure: no interval to speak of
    summed = [m for m in names if figures[m].kind == "ratio" and items.complete(m)] if items.n > 1 else []
    columns = [items.columns[m] for m in summed]
    intervals = ratio_intervals([[nums[i] for nums, _ in columns] for i in range(items.n)],
                                [[dens[i] for _, dens in columns] for i in range(items.n)]) if summed else []
    found = dict(zip(summed, intervals))
    shown = [m for m in order if m in figures or (unit == "answer" and m in N.ANSWER_MEASURES)]
    rows = [SummaryRow(m, None, None) if m not in figures
            else SummaryRow(m, figures[m].ratio(), found.get(m) if figures[m].ratio().defined else None)
            for m in shown]
    return SummaryTable(title, items.n, unit, rows, labels)


def _shown_labels(counts: Counter) -> dict[str, int]:
    counts = {label: counts.get(label, 0) for label in (*LABELS, *APART)}
    return {label: n for label, n in counts.items() if label in LABELS or n}


def _with_unjudged(labels: dict[str, int], figures: Ratios) -> dict[str, int]:
    """The label counts with every claim in them: a log written before claims no measure asked for were
    counted as unjudged lacks them (citation presence counts every claim)."""
    claims = figures[N.CITATION_PRESENCE].denominator if N.CITATION_PRESENCE in figures else 0
    missing = int(claims) - sum(labels.values())
    return {**labels, UNJUDGED: labels.get(UNJUDGED, 0) + missing} if missing > 0 else labels


def summary_tables(results: Results | Summary, counter: SummaryCounter | None = None) -> list[SummaryTable]:
    """One table per system, one for every answer when there are several systems, and one for
    retrieval over the cases. `results`: a run's results, or its summary with `counter`."""
    summary = results.summary if isinstance(results, Results) else results
    counter = counter or SummaryCounter.of(results)
    tables = [_table(f"system {system}", "answer", summary.by_system[system], counts,
                     _with_unjudged(_shown_labels(labels), summary.by_system[system]), list(SUMMARY_MEASURES))
              for system, (counts, labels) in counter.systems.items()]
    if len(counter.systems) > 1:
        tables.append(_table("all systems", "answer", summary.all, counter.every,
                             _with_unjudged(dict(summary.labels), summary.all), list(SUMMARY_MEASURES)))
    if summary.retrieval:
        tables.append(_table("retrieval", "case", summary.retrieval, counter.cases, None, list(summary.retrieval)))
    return tables


def _interval(interval: tuple[float, float] | None) -> str:
    return "—" if interval is None else format_interval(*interval)


def _measure(name: str) -> str:
    return HEADERS.get(name, name)


# --- which answers the terminal shows ------------------------------------------------------------------


def worst_key(a: AnswerRecord, i: int) -> tuple:
    """Lowest support at best first: (supported + unsure) / (judged + unsure), each claim the judge was
    unsure of counted as if it were supported. The list names an answer only for what its judgments
    show, as `compare` does: one unsupported claim beside seven unsure ones (0/1 supported, 7 unsure; at
    best 7/8) never outranks eight judged unsupported claims. An answer with neither a judged nor an
    unsure claim comes after every answer with one. Ties: more unsupported claims, then more unsure
    ones, then lower coverage, then run order `i`."""
    support = a.metrics[N.SUPPORT].ratio() if N.SUPPORT in a.metrics else None
    coverage = a.metrics[N.COVERAGE].ratio() if N.COVERAGE in a.metrics else None
    unsure = a.labels.get(UNCERTAIN, 0) if support else 0
    supported, judged = (support.numerator, support.denominator) if support else (0, 0)
    counted = judged + unsure
    return (not counted, (supported + unsure) / counted if counted else 0.0, -(judged - supported), -unsure,
            coverage.value if coverage and coverage.defined else 1.0, i)


def ranked_support(a: AnswerRecord) -> str:
    """What a ranked answer is ranked by, in words: "0/1 supported, 7 unsure"."""
    if N.SUPPORT not in a.metrics:
        return "support not measured"
    unsure = a.labels.get(UNCERTAIN, 0)
    return f"{a.metrics[N.SUPPORT].ratio().counts()} supported" + (f", {unsure} unsure" if unsure else "")


def worst_answers(results: Results, limit: int = WORST) -> list[AnswerRecord]:
    """The `limit` answers with the lowest support at best (see `worst_key`)."""
    return [a for _, a in sorted(enumerate(results.answers), key=lambda item: worst_key(item[1], item[0]))[:limit]]


def _by_case(results: Results) -> list[tuple[CaseRecord, list[AnswerRecord]]]:
    """Each case with its answers, in run order (one pass: a run may hold 10,000 answers)."""
    answers: dict[str, list[AnswerRecord]] = {c.id: [] for c in results.cases}
    for a in results.answers:
        answers.setdefault(a.case, []).append(a)
    return [(case, answers[case.id]) for case in results.cases]


def _abstained(a: AnswerRecord) -> str:
    return " — abstained (no claims)" if a.abstained else ""


# --- Markdown ------------------------------------------------------------------------------------------
# Everything that came from the input is written as text: HTML's special characters as entities (a
# viewer that renders raw HTML shows "<script>" instead of running it), Markdown's inline markup
# escaped, and a table cell kept on one line with its "|" escaped.

# "[" and "]" alone make no link here (no user text starts a line, so none defines a reference): only
# "](" does, and escaping that "]" keeps "\x1b[2J" or "[x]" as they were written.
_MARKUP = re.compile(r"[\\`*~|]|\](?=\()")
_UNDERSCORES = re.compile(r"_+")
_NEWLINES = re.compile(r"\r\n|\r|\n")


def _underscores(match: re.Match[str]) -> str:
    """Underscores inside a word never mark emphasis (CommonMark), so "rr_sphere_01" stays as it is."""
    text, start, end = match.string, match.start(), match.end()
    inside = start > 0 and end < len(text) and text[start - 1].isalnum() and text[end].isalnum()
    return match.group() if inside else "\\_" * (end - start)


def md_text(text: str, cell: bool = False) -> str:
    """User text as Markdown that shows exactly that text; in a table cell, newlines become `<br>`."""
    text = _MARKUP.sub(lambda m: "\\" + m.group(), html.escape(text, quote=False))
    text = _UNDERSCORES.sub(_underscores, text)
    return _NEWLINES.sub("<br>" if cell else " ", text)


def _md_code(text: str) -> str:
    """A code span that holds `text` whatever backticks it contains (on one line)."""
    text = _NEWLINES.sub(" ", text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_summary(tables: list[SummaryTable], shown: list[tuple[str, str]]) -> list[str]:
    out = ["## Summary", "", f"{INTERVAL_NOTE}.", ""]
    for table in tables:
        out += [f"### {md_text(table.heading)}", "", "| measure | figure | 95 % interval |", "|---|---|---|"]
        out += [f"| {_measure(r.measure)} | {md_text(r.shown, cell=True)} | {_interval(r.interval)} |"
                for r in table.rows]
        if table.labels is not None:
            out.append(f"| claims {LABELS_HEADER} | {_label_cell(table.labels)} | |")
        out.append("")
    out += ["Signatures:", ""] + [f"- {_md_code(n)}: {_md_code(s)}" for n, s in shown]
    return out + [""]


def _md_answer(a: AnswerRecord) -> list[str]:
    out = [f"### Answer {md_text(a.answer)} (system {md_text(a.system)})" + _abstained(a), ""]
    out += ["| # | claim | cited | label | why |", "|---|---|---|---|---|"]
    for c in a.claims:
        cited = ", ".join(md_text(p, cell=True) for p in c.citations) or "—"
        out.append(f"| {c.statement + 1}.{c.index + 1} | {md_text(c.text, cell=True)} | {cited} | {c.label} | "
                   f"{md_text(c.explanation, cell=True)} |")
    figures = [f"{m} {a.metrics[m].ratio()}" for m in TABLE_MEASURES if m in a.metrics]
    return out + ["", md_text(" · ".join(figures)), ""]


def to_markdown(results: Results, signature: Signature) -> str:
    """The summary (one table per system, with intervals) first, then every case and answer."""
    blocks = markdown_blocks(results.summary, SummaryCounter.of(results), signature, _by_case(results))
    return "\n".join(line for block in blocks for line in block)


def markdown_blocks(summary: Summary, counter: SummaryCounter, signature: Signature,
                    cases: Iterable[tuple[CaseRecord, list[AnswerRecord]]]) -> Iterator[list[str]]:
    """`to_markdown`'s lines, a block at a time (the summary, then each case as it is read back), so that
    a long run is printed as it goes; joined with newlines they are `to_markdown`."""
    yield _md_summary(summary_tables(summary, counter), signatures(summary, signature))
    for case, answers in cases:
        out = [f"## Case {md_text(case.id)}", "", f"**Question:** {md_text(case.question)}", ""]
        out += [f"Retrieval: {md_text(_retrieval_line(case.retrieval))}", ""]
        for a in answers:
            out += _md_answer(a)
        yield out


def report_json(results: Results, diagnosis: dict[str, list[Finding]], claims_judged: bool = True) -> dict:
    """`report --format json`: the results as the log keeps them, each summary naming every headline
    measure (one the run did not measure as `{"value": null, "reason": "not measured in this run"}`),
    and the diagnosis (the same marker when the run's measures judged no claim)."""
    data = results.model_dump(mode="json")
    summary = data["summary"]
    for figures in (summary["all"], *summary["by_system"].values()):
        if figures:  # a summary of answers: every headline measure has its place
            figures.update({m: N.not_measured_json() for m in N.ANSWER_MEASURES if m not in figures})
    data["diagnosis"] = ({k: [f.model_dump(mode="json") for f in v] for k, v in diagnosis.items()}
                         if claims_judged else N.not_measured_json())
    return data


def diagnosis_markdown(diagnosis: dict[str, list[Finding]], claims_judged: bool = True) -> str:
    """Failures grouped by where the fix lies: search and filters, evidence use, completeness, or the
    judgment itself (claims the judge was unsure of). A run that judged no claim (`claims_judged`
    False: its measures need none) diagnoses nothing, and says so rather than "every claim supported"."""
    out = ["## Diagnosis", ""]
    if not claims_judged:
        return "\n".join([*out, f"{N.NOT_MEASURED}: the run's measures judge no claim, so no claim and no "
                                 "required fact is diagnosed"]) + "\n"
    for answer, findings in diagnosis.items():
        if not findings:
            out.append(f"- {md_text(answer)}: every claim supported, every required fact conveyed")
            continue
        out.append(f"- {md_text(answer)}:")
        for area in AREAS:
            for f in (f for f in findings if f.area == area):
                out.append(f"  - {area}: {f.kind} {md_text(f.ref)} *{f.cause.replace('_', ' ')}* — {md_text(f.text)}")
    return "\n".join(out) + "\n"


# --- the terminal --------------------------------------------------------------------------------------

# Printed to a file or a pipe, a line is as long as its content: a reader (or grep) gets every id and
# claim whole, never "rr_sphe…" cut to an 80-column guess.
PIPED_WIDTH = 1_000_000


def terminal_console():
    """A rich console on stdout: the terminal's width (and colour) on a terminal; plain and as wide
    as the content anywhere else."""
    from rich.console import Console

    console = Console(soft_wrap=False)
    if console.is_terminal:
        return console
    return Console(width=PIPED_WIDTH, soft_wrap=True, color_system=None, highlight=False)


LABEL_STYLE = {"full": "green", "partial": "yellow", "none": "red", "contradicts": "bold red", "unjudged": "dim",
               "uncertain": "magenta"}


class _Rich:
    """On a terminal: rich tables that fit its width, labels in colour."""

    def __init__(self, console):
        self.console = console

    @staticmethod
    def _shown(text: str) -> str:
        """A user's string as rich prints it: controls made visible, "[...]" kept literal (not markup)."""
        from rich.markup import escape

        return escape(visible_controls(text))

    def line(self, text: str = "", head: str = "") -> None:
        """`head` (in bold), then `text`."""
        shown = f"[bold]{self._shown(head)}[/bold]" if head else ""
        self.console.print(shown + self._shown(text), highlight=False, soft_wrap=True)

    def table(self, title: str, headers: tuple[str, ...], rows: list[tuple[str, ...]], label_column: int = -1) -> None:
        from rich.table import Table

        table = Table(title=self._shown(title), title_justify="left")
        for header in headers:
            table.add_column(header, overflow="fold")
        for row in rows:
            cells = [self._shown(c) for c in row]
            if 0 <= label_column and row[label_column] in LABEL_STYLE:
                cells[label_column] = f"[{LABEL_STYLE[row[label_column]]}]{cells[label_column]}[/]"
            table.add_row(*cells)
        self.console.print(table)


class _Plain:
    """Anywhere else: plain lines, columns padded to their widest cell and never cut or wrapped (and
    many times faster than rich tables, which counts for 10,000 answers)."""

    def __init__(self, console):
        self.console = console

    def line(self, text: str = "", head: str = "") -> None:
        self._write(visible_controls(head + text))

    def _write(self, text: str) -> None:
        self.console.file.write(text + "\n")  # as it is: nothing for rich to lay out

    def table(self, title: str, headers: tuple[str, ...], rows: list[tuple[str, ...]], label_column: int = -1) -> None:
        from rich.cells import cell_len

        cells = [list(headers)] + [[visible_controls(c) for c in row] for row in rows]
        widths = [max(cell_len(r[i]) for r in cells) for i in range(len(headers))]
        lines = [visible_controls(title)]
        for r in cells:
            padded = "  ".join(c + " " * (w - cell_len(c)) for c, w in zip(r[:-1], widths))
            lines.append(f"  {padded}  {r[-1]}".rstrip(" "))
        self._write("\n".join(lines))


SIGNATURES_HINT = "each measure's whole signature: --signatures"


def settings_lines(summary: Summary, signature: Signature) -> list[str]:
    """The terminal's short form of the signatures: the judge once (when a measure shown uses one) and
    the settings they share once; every signature's other fields are the measure's own (agg, gold)."""
    names = [n for n, _ in signatures(summary, signature)]
    judged = any(N.parse_at_k(n) is None and n not in N.JUDGE_FREE for n in names)
    return ([f"judge: {signature.judge}"] if judged else []) + [
        f"settings: {signature.settings(names)} ({SIGNATURES_HINT})"]


def _print_summary(tables: list[SummaryTable], summary: Summary, signature: Signature, out,
                   every_signature: bool) -> None:
    out.line(f"summary ({INTERVAL_NOTE})")
    for table in tables:
        rows = [(_measure(r.measure), r.shown, _interval(r.interval)) for r in table.rows]
        if table.labels is not None:
            rows.append((f"claims {LABELS_HEADER}", _label_cell(table.labels), ""))
        out.table(table.heading, ("measure", "figure", "95 % interval"), rows)
    if not every_signature:
        for line in settings_lines(summary, signature):
            out.line(line)
        return
    out.line("signatures:")
    for n, s in signatures(summary, signature):
        out.line(f"  {n}: {s}")


def _print_answer(a: AnswerRecord, out, title: str) -> None:
    rows = [(f"{c.statement + 1}.{c.index + 1}", c.text, ", ".join(c.citations) or "—", c.label, c.explanation)
            for c in a.claims]
    rows += [(f"{s.index + 1}", s.text, "—", f"({s.kind})", "not scored") for s in a.statements if s.kind != "claim"]
    out.table(title + _abstained(a), ("#", "claim", "cited", "label", "why"), rows, label_column=3)
    out.line("  " + " · ".join(f"{m} {a.metrics[m].ratio()}" for m in TABLE_MEASURES if m in a.metrics))


def print_text(results: Results, signature: Signature, console, details: bool = False, limit: int = WORST,
               every_signature: bool = False) -> None:
    """Terminal output: the summary, then every case when `details` (or when the run has no more than
    `limit` answers), else the `limit` answers with the lowest support and how many were left out.
    Under the summary, the judge and the run's settings once, or with `every_signature` each measure's
    whole signature.
    Rich tables and colour on a terminal, plain full-width lines anywhere else. Every string that came
    from the input is printed as text: control characters visible, never markup."""
    every = details or len(results.answers) <= limit
    questions = {c.id: c.question for c in results.cases}
    worst = [] if every else [(a, questions.get(a.case, "")) for a in worst_answers(results, limit)]
    print_streamed_text(results.summary, SummaryCounter.of(results), signature,
                        _by_case(results) if every else None, worst, len(results.answers), console,
                        every_signature)


def print_streamed_text(summary: Summary, counter: SummaryCounter, signature: Signature,
                        cases: Iterable[tuple[CaseRecord, list[AnswerRecord]]] | None,
                        worst: list[tuple[AnswerRecord, str]], answers: int, console=None,
                        every_signature: bool = False) -> None:
    """`print_text` from a summary and its counts, then either every case (`cases`, as read back) or the
    `worst` answers with their questions, out of `answers`."""
    console = console or terminal_console()
    out = _Rich(console) if console.is_terminal else _Plain(console)
    _print_summary(summary_tables(summary, counter), summary, signature, out, every_signature)
    out.line()
    if cases is not None:
        for case, shown in cases:
            out.line(f": {case.question}", head=f"Case {case.id}")
            out.line(f"  retrieval: {_retrieval_line(case.retrieval)}")
            for a in shown:
                _print_answer(a, out, f"answer {a.answer}")
            out.line()
        return
    rule = f", {RANK_RULE}" if summary.labels.get(UNCERTAIN) else ""  # the rule matters only then
    out.line(f" ({answers - len(worst)} of {answers} left out; --details shows every "
             "answer)", head=f"the {len(worst)} answers with the lowest support{rule}")
    for a, question in worst:
        _print_answer(a, out, f"case {a.case} · answer {a.answer} · system {a.system} · {ranked_support(a)}")
        out.line(f"  question: {question}")
        out.line()


def text_report(results: Results, signature: Signature, details: bool = False, every_signature: bool = False) -> str:
    """What `print_text` prints to a file or a pipe, as a string (for `report --format text -o`)."""
    import io

    from rich.console import Console

    buffer = io.StringIO()
    print_text(results, signature, Console(file=buffer, width=PIPED_WIDTH, color_system=None), details,
               every_signature=every_signature)
    return buffer.getvalue()
