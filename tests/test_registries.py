"""One registry per kind of plug-in: the command line's choices and the docs' lists follow it, so that a
reader or a measure is added in one place."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from citeaudit.cli.common import parse_metrics as _parse_metrics
from citeaudit.cli.run import score
from citeaudit.metrics import names as N
from citeaudit.files.readers import READERS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _choices(command: click.Command, option: str) -> list[str]:
    param = next(p for p in command.params if option in p.opts)
    return list(param.type.choices)


def test_from_offers_the_native_format_then_every_reader():
    assert _choices(score, "--from") == ["citeaudit", *READERS]
    assert len(READERS) >= 4


def test_docs_readers_has_a_section_per_reader():
    doc = (DOCS / "readers.md").read_text(encoding="utf-8")
    assert re.findall(r"^## .*\(`--from (\w+)`\)$", doc, re.M) == list(READERS)


def test_metrics_takes_the_selectable_measures_and_names_them_when_refusing():
    assert _parse_metrics(",".join(N.SELECTABLE)) == N.SELECTABLE
    with pytest.raises(click.BadParameter) as err:
        _parse_metrics("recall@3")
    assert str(err.value).endswith("choose from " + ", ".join(N.SELECTABLE))
    assert not set(N.SELECTABLE) & set(N.JUDGE_FREE)


def test_docs_metrics_table_lists_every_measure():
    doc = (DOCS / "metrics.md").read_text(encoding="utf-8")
    table = doc.split("| name | numerator / denominator |", 1)[1].split("\n\n", 1)[0]
    assert sorted(re.findall(r"^\| `([\w@]+)` \|", table, re.M)) == sorted(N.MEASURES)


def test_docs_metrics_lists_what_metrics_chooses_from():
    doc = " ".join((DOCS / "metrics.md").read_text(encoding="utf-8").split())
    listed = doc.split("`--metrics support,citation_recall,…` (from ", 1)[1].split(")", 1)[0]
    assert re.findall(r"`(\w+)`", listed) == list(N.SELECTABLE)


def test_the_registry_gives_the_lists_callers_use():
    from citeaudit.run.compare import COMPARED
    from citeaudit.report.render import SUMMARY_MEASURES

    assert N.DESCRIPTIONS == {m.name: m.description for m in N.MEASURES.values()}
    assert N.MEAN_MEASURES == (N.ALCE_CITATION_RECALL, N.ALCE_CITATION_PRECISION)
    assert COMPARED == N.ANSWER_MEASURES and N.ABSTENTION in COMPARED and N.INVALID_CITATIONS not in COMPARED
    assert SUMMARY_MEASURES == tuple(m for m in N.MEASURES if N.MEASURES[m].kind == "answer")
    assert all(N.parse_at_k(m.replace("@k", "@1")) for m in N.MEASURES if N.MEASURES[m].kind == "retrieval")
