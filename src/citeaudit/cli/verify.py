"""`citeaudit verify CASE_OR_ANSWER`: deliver, revise or abstain, with the supported answer and the gaps.

    citeaudit verify cases.json --answer A [--judge J] [--store S] [--policy P] [--format text|json] [--out LOG]
    citeaudit verify checking.json --from ragchecker --answer CASE/response [...]
    citeaudit verify answer.txt --sources passages.json [...]

Exit codes: 0 deliver, 1 revise, 4 abstain; 2 bad input and 3 a judge failure, as everywhere.
"""

from __future__ import annotations

from pathlib import Path

import click

from citeaudit.cli.common import (check_destinations, echo_text, load_inputs, parse_reader_options, reader_options,
                                  repair_search_options)

ANSWER_SUFFIXES = (".txt", ".md")
SHOWN_ANSWERS = 20  # answers named in a message about --answer; a file of another tool's may hold thousands


def _pick(cases, wanted: str | None):
    """The (case, answer id) that --answer names: `ID`, or `CASE/ID` (either may hold a slash itself, as
    other tools' ids do); the only answer when not given."""
    every = [(rc, a.id) for rc in cases for a in rc.case.answers]
    pairs = every if wanted is None else [(rc, a) for rc, a in every if wanted in (a, f"{rc.id}/{a}")]
    if len(pairs) == 1:
        return pairs[0]
    listed = pairs or every
    shown = ", ".join(f"{rc.id}/{a}" for rc, a in listed[:SHOWN_ANSWERS])
    if len(listed) > SHOWN_ANSWERS:
        shown += f", … ({len(listed) - SHOWN_ANSWERS} more)"
    if not pairs:
        raise click.BadParameter(f"no answer {wanted!r}; answers: {shown or 'none'}", param_hint="--answer")
    raise click.BadParameter(f"{'several answers match' if wanted else 'the file holds several answers'}: "
                             f"name one as ID or CASE/ID ({shown})", param_hint="--answer")


@click.command("verify")
@click.argument("case_or_answer", type=click.Path(exists=True))
@click.option("--answer", "answer_id", help="the answer to verify in a case file: ID or CASE/ID "
                                             "(needed when the file holds several)")
@click.option("--sources", "sources_path", type=click.Path(dir_okay=False, exists=True),
              help="for an answer given as a text file: JSON sources (a mapping id -> text, or a list of documents)")
@click.option("--judge", "judge_name", default="model", show_default=True,
              help="judge that labels (claim, cited passages) pairs; `curated` uses the case's own labels")
@click.option("--store", type=click.Path(dir_okay=False),
              help="SQLite file of recorded judgments: read first, new judgments written to it")
@click.option("--policy", "policy_text", default="strict", show_default=True,
              help="what counts: partial=supported|unsupported, max_unsupported=SHARE (comma-separated)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--out", "out", type=click.Path(dir_okay=False), help="write the run log of the verification here")
@click.option("--repair/--no-repair", default=True, show_default=True,
              help="look among the other sources for citations that support a gap's claim, and keep the claim "
                   "with them instead of dropping it")
@repair_search_options
@reader_options("the case file")
@click.pass_context
def verify_cmd(ctx, case_or_answer, answer_id, sources_path, judge_name, store, policy_text, fmt, out, repair,
               candidates, budget, source_format, reader_options):
    """Decide whether an answer can go out: deliver (every claim supported), revise (some are not) or
    abstain (none is). Prints the decision, the answer as its sources support it, and each gap with the
    best evidence found and why it falls short. A gap's claim that another of the sources supports is kept
    with that citation instead ("kept with S3 instead of S2"; --no-repair drops it).

    CASE_OR_ANSWER is a case file (JSON or JSONL, or another tool's file with --from; pick the answer with
    --answer) or a text file holding a raw answer with citation markers, verified against --sources.

    Exit codes: 0 deliver, 1 revise, 4 abstain, 2 bad input, 3 a judge could not judge.
    """
    from citeaudit.judges import parse_judge
    from citeaudit.run.repair import RepairOptions
    from citeaudit.run.verify import Policy, answer_file_case, verify_case

    spec = parse_judge(judge_name)  # a bad spec stops here, before anything is read or judged
    policy = Policy.parse(policy_text)
    search = RepairOptions(candidates=candidates, budget=budget) if repair else None
    check_destinations(("--out", out), ("--store", store))
    other_format = source_format != "citeaudit"
    parse_reader_options(reader_options, source_format)  # a bad --option is refused before any work
    if other_format and sources_path:
        raise click.UsageError("--from reads a case file in another tool's format, which holds its own sources; "
                               "--sources goes with an answer given as text")
    is_text = not other_format and (Path(case_or_answer).suffix.lower() in ANSWER_SUFFIXES or sources_path is not None)
    if is_text:
        if sources_path is None:
            raise click.UsageError("an answer given as text needs --sources")
        if Path(case_or_answer).is_dir():
            raise click.BadParameter(f"{case_or_answer} is a folder, not an answer", param_hint="CASE_OR_ANSWER")
        rc = answer_file_case(case_or_answer, sources_path, answer_id)
        chosen = rc.case.answers[0].id
    else:
        rc, chosen = _pick(load_inputs([case_or_answer], fmt=source_format, reader_options=reader_options), answer_id)
    result = verify_case(rc, chosen, spec, policy, store=store, repair=search)
    if out:
        result.write_log(out, inputs=[p for p in (case_or_answer, sources_path) if p], reader=source_format)
        click.echo(f"run log written to {out}", err=True)
    if fmt == "json":
        click.echo(result.model_dump_json(indent=2))
    else:
        echo_text(result.render(), nl=False)
    ctx.exit(result.exit_code)


commands = [verify_cmd]
