"""`citeaudit repair RUN_OR_CASES`: propose, for each claim its citations do not support, the smallest set
of the case's passages the judge finds does, apply it, and show the figures before and after.

    citeaudit repair cases.json [--judge J] [--store S] [--candidates K] [--budget N] [--out repaired.json] [--log run.json]
    citeaudit repair run.json [...]                         # a run log: its cases, judge and judgments
    citeaudit repair answers.jsonl --from expertqa --judge model [...]
"""

from __future__ import annotations

import json

import click

from citeaudit.cli.common import (SIGNATURES, check_destinations, echo_text, input_options, load_inputs, read_log, reading_for,
                                  repair_search_options)


def _run_log_source(path: str, judge_name: str | None, store: str | None):
    """A run log's cases, settings and judgment source: its recorded judgments first, then --store, then
    its judge made again here when it can be (else --judge; else its judgments only)."""
    from citeaudit.desk.rebuild import rebuild_log_judge
    from citeaudit.errors import InputError, Problem
    from citeaudit.judges import Judgments, JudgmentStore, RecordedJudge, parse_judge, run_judge
    from citeaudit.judges.store import LayeredStore
    from citeaudit.run.log import log_parsing, replay_judgments, resolved_cases

    log = read_log(path)
    if not log.cases:
        raise InputError([Problem(path, None, "cases", "the run log holds no cases: nothing to repair")])
    cases = resolved_cases(log)
    recorded = replay_judgments(log, cases).store
    store_layers = LayeredStore(recorded, JudgmentStore(store) if store else None)
    conventions = log.settings.conventions
    if judge_name:
        spec = parse_judge(judge_name)
        judge = run_judge(spec, cases, conventions)
    else:
        rebuilt = rebuild_log_judge(log, cases)
        spec = rebuilt.spec or (parse_judge(log.judge_spec.spec, read_files=False) if log.judge_spec else None)
        judge = rebuilt.judge or RecordedJudge(store_layers, log.judge)
        if rebuilt.judge is None:
            echo_text(f"citeaudit: repair: the run's judge cannot be made again here ({log.judge[:80]}): candidates "
                      "are judged from the run's recorded judgments and --store only, the rest skipped; "
                      "--judge SPEC judges them", err=True)
    return cases, log.settings.to_settings(), Judgments(judge, store_layers, spec=spec), log_parsing(log)


def _write_cases(path: str, cases) -> None:
    """The repaired cases as a case file: one case a line for a .jsonl path, else one JSON list."""
    from citeaudit.files.destinations import write_output

    data = [c.model_dump(mode="json", exclude_none=True, exclude_defaults=True) for c in cases]  # as people write them
    if path.endswith(".jsonl"):
        text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in data)
    else:
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    write_output(path, text, "repaired cases")


@click.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path())
@click.option("--judge", "judge_name", default=None,
              help="judge for the candidates (default: curated; for a run log, the run's own judge when it can be "
                   "made again here, else its recorded judgments only)")
@click.option("--store", type=click.Path(dir_okay=False),
              help="SQLite file of recorded judgments: read first, every new judgment written to it")
@repair_search_options
@click.option("--rank", type=click.Choice(["lexical", "embedding"]), default="lexical", show_default=True,
              help="how candidates are ordered before any is judged: lexical overlap with the claim, or the "
                   "embedding judge's similarity (citeaudit[embedding]; a ranker only, never a verdict)")
@click.option("--out", type=click.Path(dir_okay=False),
              help="write the cases with the suggested citations applied (a case file: JSON, or JSONL for .jsonl)")
@click.option("--log", "log_path", type=click.Path(dir_okay=False),
              help="write the run log of the repaired answers; each repaired claim keeps its original citations "
                   "and the suggestion, with its evidence and judgment")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@SIGNATURES
@input_options
def repair(inputs, judge_name, store, candidates, budget, rank, out, log_path, fmt, every_signature, source_format,
           conventions,
           invalid_citations, labels_path, reader_options, claims):
    """Propose, for each claim whose citations do not support it, the smallest set of the case's passages
    the judge finds does ("cite S1 instead of S2", "add S3"), and for each citation that earns no precision
    credit, the set without it ("drop S2 (not needed)"); apply them, and print each system's citation recall,
    citation precision, support and coverage before and after.

    INPUTS is a run log (its cases, judge and recorded judgments) or case files (another tool's with --from).
    A claim no passage supports is left as it is. Only citations change: every text stays as written."""
    from citeaudit.judges import judgment_source, parse_judge
    from citeaudit.metrics import Parsing, Settings
    from citeaudit.report.repairs import render_repairs, repairs_json
    from citeaudit.run.log import is_run_log, write_runlog
    from citeaudit.run.repair import RepairOptions, repair_cases, repair_settings

    options = RepairOptions(candidates=candidates, budget=budget, rank=rank)
    check_destinations(("--out", out), ("--log", log_path), ("--store", store))
    if source_format == "citeaudit" and len(inputs) == 1 and is_run_log(inputs[0]):
        reading_options = {"--conventions": conventions != "citeaudit", "--invalid-citations": invalid_citations,
                           "--labels": labels_path, "--claims": claims != "rule", "--option": reader_options}
        given = [name for name, value in reading_options.items() if value]
        if given:
            raise click.UsageError(f"{', '.join(given)} read case files; a run log's cases are read as the run "
                                   "read them")
        cases, settings, judgments, parsing = _run_log_source(inputs[0], judge_name, store)
    else:
        for path in inputs:
            if is_run_log(path):
                raise click.UsageError(f"{path} is a run log: repair it on its own, not with case files or --from")
        spec = parse_judge(judge_name or "curated")  # a bad spec stops here, before anything is read
        reading = reading_for(conventions, invalid_citations, source_format, claims, store)
        cases = load_inputs(inputs, reading, source_format, labels_path, reader_options)
        settings = Settings(conventions=reading.conventions, invalid_citations=reading.invalid_citations)
        judgments = judgment_source(spec, cases, store=store, conventions=reading.conventions)
        parsing = Parsing.of(cases, settings, reading)
    repaired = repair_cases(cases, judgments, repair_settings(settings), options, parsing)
    if out:
        _write_cases(out, repaired.cases)
        click.echo(f"repaired cases written to {out}", err=True)
    if log_path:
        write_runlog(log_path, repaired.runlog(inputs, source_format))
        click.echo(f"run log written to {log_path}", err=True)
    if fmt == "json":
        click.echo(json.dumps(repairs_json(repaired, judgments.signature), ensure_ascii=False, indent=2))
    else:
        echo_text(render_repairs(repaired, judgments.signature, every_signature), nl=False)


commands = [repair]
