"""`citeaudit verify CASE_OR_ANSWER`: deliver, revise or abstain, with the supported answer and the gaps.

    citeaudit verify cases.json --answer A [--judge J] [--store S] [--policy P] [--format text|json] [--out LOG]
    citeaudit verify answer.txt --sources passages.json [...]

Exit codes: 0 deliver, 1 revise, 4 abstain; 2 bad input and 3 a judge failure, as everywhere.
"""

from __future__ import annotations

from pathlib import Path

import click

from citeaudit.cli.common import echo_text

ANSWER_SUFFIXES = (".txt", ".md")


def _read_sources(path: str):
    """A JSON file of sources: a mapping id -> text, or a list of documents or passages."""
    from citeaudit.errors import InputError, Problem
    from citeaudit.files.loading import read_json_file

    data = read_json_file(path)
    if not isinstance(data, (dict, list)):
        raise InputError([Problem(path, None, "", "expected a mapping id -> text, or a list of documents")])
    return data


def _pick(cases, wanted: str | None):
    """The (case, answer id) that --answer names (`ID` or `CASE/ID`); the only answer when not given."""
    pairs = [(rc, a.id) for rc in cases for a in rc.case.answers]
    if wanted is not None:
        case_id, slash, answer_id = wanted.rpartition("/")
        pairs = [(rc, a) for rc, a in pairs if a == answer_id and (not slash or rc.id == case_id)]
    if len(pairs) == 1:
        return pairs[0]
    shown = ", ".join(f"{rc.id}/{a}" for rc, a in [(rc, a.id) for rc in cases for a in rc.case.answers])
    if not pairs:
        raise click.BadParameter(f"no answer {wanted!r}; answers: {shown or 'none'}", param_hint="--answer")
    raise click.BadParameter(f"{'several answers match' if wanted else 'the file holds several answers'}: "
                             f"name one as ID or CASE/ID ({shown})", param_hint="--answer")


@click.command("verify")
@click.argument("case_or_answer", type=click.Path(dir_okay=False, exists=True))
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
@click.pass_context
def verify_cmd(ctx, case_or_answer, answer_id, sources_path, judge_name, store, policy_text, fmt, out):
    """Decide whether an answer can go out: deliver (every claim supported), revise (some are not) or
    abstain (none is). Prints the decision, the answer as its sources support it, and each gap with the
    best evidence found and why it falls short.

    CASE_OR_ANSWER is a case file (JSON or JSONL; pick the answer with --answer) or a text file holding a
    raw answer with citation markers, verified against --sources.

    Exit codes: 0 deliver, 1 revise, 4 abstain, 2 bad input, 3 a judge could not judge.
    """
    from citeaudit.files.destinations import check_destination
    from citeaudit.run.verify import Policy, verify, verify_case

    policy = Policy.parse(policy_text)
    for option, path in (("--out", out), ("--store", store)):
        if path:
            check_destination(path, option)
    is_text = Path(case_or_answer).suffix.lower() in ANSWER_SUFFIXES or sources_path is not None
    if is_text:
        if sources_path is None:
            raise click.UsageError("an answer given as text needs --sources")
        text = Path(case_or_answer).read_text(encoding="utf-8")
        result = verify({"id": answer_id or Path(case_or_answer).stem, "text": text}, _read_sources(sources_path),
                        judge_name, policy, store=store)
    else:
        from citeaudit.files.loading import load_cases

        rc, chosen = _pick(load_cases([case_or_answer]), answer_id)
        result = verify_case(rc, chosen, judge_name, policy, store=store)
    if out:
        result.write_log(out, inputs=[p for p in (case_or_answer, sources_path) if p])
        click.echo(f"run log written to {out}", err=True)
    if fmt == "json":
        click.echo(result.model_dump_json(indent=2))
    else:
        echo_text(result.render(), nl=False)
    ctx.exit(result.exit_code)


commands = [verify_cmd]
