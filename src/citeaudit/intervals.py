"""What a bootstrap drew, in words, for the line under its intervals (`stats.drawing` decides it). Kept
apart from stats.py so that command modules can import it without numpy."""

from __future__ import annotations

FEW_UNITS = 10  # fewer draws than this: the line says to read the intervals as too narrow
SHARING_CLAIM_OR_PASSAGE = ("a claim or a passage", "claims or passages")
# what an interval over 2 to 19 items (answers, cases) is, beside its percentile bootstrap (stats.ratio_intervals)
WIDENED = "widened to span a jackknife's t interval"


def what_was_drawn(resampling: dict | None, unit: str, sharing: tuple[str, str] = SHARING_CLAIM_OR_PASSAGE) -> str:
    """What a bootstrap drew (`drawing`'s account), for the end of an intervals line: `, drawing whole
    groups of rows that share a claim or a passage: N groups, the largest M rows`, or `, drawing the N
    rows one by one` (and, when they made one group only, so); a warning when there were fewer than
    FEW_UNITS to draw. With 2 to 19 groups, the line says each interval spans a jackknife over the groups
    and the items drawn one by one. `unit`: "row" or "pair"; `sharing`: what puts items in one group,
    said of one item and of many."""
    if not resampling:
        return ""
    units = resampling["units"]
    if resampling["by"] == "jackknife":  # the line's "bootstrap" drew nothing: say what was done instead
        largest = resampling["largest"]
        return (f"; but {unit}s that share {sharing[0]} make only {units} groups (the largest {largest} "
                f"{unit}{'s' if largest != 1 else ''}), too few to draw whole: each interval spans a jackknife "
                f"(each group left out in turn, the figure ± t({units - 1}) × its standard error) and the "
                f"{unit}s drawn one by one")
    if resampling["by"] == "groups":
        largest = resampling["largest"]
        text = (f", drawing whole groups of {unit}s that share {sharing[0]}: {units} groups, "
                f"the largest {largest} {unit}{'s' if largest != 1 else ''}")
    else:
        text = f", drawing the {units} {unit}s one by one"
        if "groups" in resampling:
            text += f" (they share {sharing[1]} in one group only)"
    if units < FEW_UNITS:  # a bootstrap over a handful of draws understates how much a figure can move
        text += f" (fewer than {FEW_UNITS}: read the intervals as too narrow)"
    return text
