"""Ratio: a score that keeps its counts. A zero denominator is undefined (n/a, with a reason)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ratio:
    """`numerator / denominator`, or, for `mean` ratios, a sum of per-item values over an item count.

    `empty_value` is a convention for a zero denominator (ALCE reports 0 precision for an answer with
    no citations); without one, a zero denominator is undefined and `reason` says why.
    """

    numerator: float
    denominator: float
    reason: str | None = None
    empty_value: float | None = None
    kind: str = "ratio"  # "ratio" (summed counts) or "mean" (mean of per-item values)

    @property
    def value(self) -> float | None:
        if self.denominator:
            return self.numerator / self.denominator
        return self.empty_value

    @property
    def defined(self) -> bool:
        return self.value is not None

    def __add__(self, other: Ratio) -> Ratio:
        if self.kind != other.kind:
            raise ValueError("cannot add a ratio and a mean")
        reason = self.reason if self.reason == other.reason else (self.reason or other.reason)
        return Ratio(self.numerator + other.numerator, self.denominator + other.denominator, reason,
                     self.empty_value, self.kind)

    def counts(self) -> str:
        if self.kind == "mean":
            return f"mean of {int(self.denominator)}"
        return f"{_num(self.numerator)}/{_num(self.denominator)}"

    def percent(self) -> str:
        return format_percent(self.value)

    def __str__(self) -> str:
        if self.denominator == 0:
            if self.empty_value is None:
                return f"n/a ({self.reason})" if self.reason else "n/a"
            return f"{self.counts()} ({self.percent()}, {self.reason})"
        return f"{self.counts()} ({self.percent()})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "numerator": self.numerator,
            "denominator": self.denominator,
            "value": self.value,
            "kind": self.kind,
            **({"reason": self.reason} if self.reason and not self.denominator else {}),
        }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


def format_percent(value: float | None) -> str:
    """A share as every report prints it: "33.3 %", or "n/a" when undefined."""
    return "n/a" if value is None else f"{100 * value:.1f} %"


def format_interval(low: float, high: float) -> str:
    """A 95 % interval of a share as every report prints it: "30.0 – 36.7 %"."""
    return f"{100 * low:.1f} – {100 * high:.1f} %"


def mean_of(values: list[float | None], reason: str) -> Ratio:
    """Mean of the defined per-item values (undefined items are skipped, as ALCE skips them)."""
    defined = [v for v in values if v is not None]
    return Ratio(sum(defined), len(defined), reason, kind="mean")
