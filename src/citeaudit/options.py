"""The grammar of a judge's options: `NAME:ARGUMENT`, a table of typed options per judge (name, kind of
value, default, environment variable, signature key), parsed from a spec (`JudgeOptions.parse`) or
checked from Python (`JudgeOptions.of`). An unknown or malformed option, or a bad environment
variable, is a `JudgeSetupError` that names it and lists the valid options.

At the bottom layer, so that whoever declares a table (the judges, the OpenAI-compatible client in
llm.py that the claim splitter shares) needs nothing above it; judges/spec.py holds the built-in tables.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from citeaudit.errors import JudgeSetupError
from citeaudit.records import LABELS

# --- kinds of values ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """A type of option value: what it expects (for messages), how a written value is read, and which
    Python values it allows. Both callables raise ValueError on a value that is not one."""

    expected: str
    read: Callable[[str], Any]
    coerce: Callable[[Any], Any]


def integer(low: int = 1, high: int | None = None) -> Kind:
    expected = (f"an integer within {low}..{high}" if high is not None
                else "a positive integer" if low == 1 else f"an integer >= {low}")

    def coerce(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            raise ValueError(value)
        return value

    def read(text: str) -> int:
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            raise ValueError(text)
        return coerce(int(text))

    return Kind(expected, read, coerce)


def number(low: float | None = None, high: float | None = None, above: float | None = None) -> Kind:
    """A finite number within [low, high], or greater than `above` (and at most `high`, when given)."""
    if above is not None and high is not None:
        expected = f"a number > {above:g} and <= {high:g}"
    elif above is not None:
        expected = f"a number > {above:g}"
    elif low is not None and high is not None:
        expected = f"a number within {low:g}..{high:g}"
    elif low is not None:
        expected = f"a number >= {low:g}"
    else:
        expected = "a number"

    def coerce(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(value)
        value = float(value)
        if (not math.isfinite(value) or (low is not None and value < low) or (high is not None and value > high)
                or (above is not None and value <= above)):
            raise ValueError(value)
        return value

    return Kind(expected, lambda text: coerce(float(text)), coerce)


_SWITCH = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}


def switch() -> Kind:
    def read(text: str) -> bool:
        if text.lower() not in _SWITCH:
            raise ValueError(text)
        return _SWITCH[text.lower()]

    def coerce(value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(value)
        return value

    return Kind("on or off", read, coerce)


def choice(*values: str) -> Kind:
    def coerce(value: Any) -> str:
        if value not in values:
            raise ValueError(value)
        return value

    return Kind(" or ".join(values) if len(values) < 3 else "one of " + ", ".join(values),
                lambda text: coerce(text.lower()), coerce)


def text(expected: str = "a non-empty text") -> Kind:
    def coerce(value: Any) -> str:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value:
            raise ValueError(value)
        return value

    return Kind(expected, coerce, coerce)


# --- options --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One option of a judge."""

    name: str  # as written in a spec: model:guard=off
    kind: Kind
    default: Any  # None: unset, the judge decides (e.g. onnxruntime's own thread count)
    help: str
    keyword: str = ""  # the judge's constructor parameter (default: `name`)
    aliases: tuple[str, ...] = ()  # other names accepted in a spec
    env: str | None = None  # environment variable read when the spec does not set the option
    in_spec: bool = True  # False: set by its environment variable only
    signed: str | None = None  # its key in the judge's signature, when it enters the signature
    # how its value is written in the signature; None leaves the option out (a judge that signed nothing for
    # it before the option existed keeps that signature for the value it then had)
    show: Callable[[Any], str | None] = str
    needs: str | None = None  # another option that must be set when this one is (max_cost needs a price)

    @property
    def parameter(self) -> str:
        return self.keyword or self.name

    def check(self, value: Any) -> Any:
        """`value` as the option holds it; ValueError when not allowed."""
        if value is None and self.default is None:
            return None
        return self.kind.coerce(value)


@dataclass(frozen=True)
class Options:
    """A judge's options, checked, every one with its value (defaults filled in)."""

    table: JudgeOptions
    values: Mapping[str, Any]
    head: str = ""  # what comes before the options: hf/onnx PATH, openai MODEL
    labels: Mapping[str, str] = field(default_factory=dict)  # hf/onnx NAME=label mapping

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def keywords(self) -> dict[str, Any]:
        """The options as the judge's constructor takes them."""
        return {o.parameter: self.values[o.name] for o in self.table.options}

    def signature(self, **actual: Any) -> str:
        """The options that enter the signature, `|key=value` each, in table order. `actual` gives the
        value an option took effect with where that differs from the one asked for (calibration asked
        for, but the model directory has none)."""
        shown = ((o.signed, o.show(actual.get(o.name, self.values[o.name]))) for o in self.table.options if o.signed)
        return "".join(f"|{key}={value}" for key, value in shown if value is not None)


@dataclass(frozen=True)
class JudgeOptions:
    """The option table of one judge, and its grammar."""

    judge: str
    options: tuple[Option, ...]
    bare: str | None = None  # the option a bare value sets: embedding:0.85
    head: str | None = None  # "PATH": PATH[::NAME=label,...] (hf, onnx); "MODEL": the whole argument (openai)
    example: str = ""

    def option(self, name: str) -> Option | None:
        name = name.lower()
        return next((o for o in self.options if o.in_spec and (o.name == name or name in o.aliases)), None)

    def usage(self) -> str:
        """The valid options, for messages and `citeaudit judges`."""
        parts = [f"{o.name}=<{o.kind.expected}>" for o in self.options if o.in_spec]
        if self.head == "PATH":
            parts = ["PATH", "PATH::NAME=label,... (label: " + ", ".join(LABELS) + ")",
                     *(f"PATH::{p}" for p in parts)]
        elif self.head == "MODEL":
            parts = ["MODEL", *(f"MODEL,{p}" for p in parts)]
        envs = [o.env for o in self.options if o.env]
        described = ", ".join(parts) if parts else "none"
        if envs:
            described += "; environment: " + ", ".join(envs)
        return described + (f"; e.g. {self.example}" if self.example else "")

    def written(self, option: Option) -> str:
        """How `option` is given in a spec: model:guard=..., hf:PATH::threads=..., openai:MODEL,timeout=..."""
        where = {"PATH": "PATH::", "MODEL": "MODEL,"}.get(self.head or "", "")
        return f"{self.judge}:{where}{option.name}=..."

    def _bad(self, part: str, problem: str) -> JudgeSetupError:
        return JudgeSetupError(f"bad {self.judge} judge option '{part}': {problem}; valid options: {self.usage()}")

    def parse(self, argument: str, environ: Mapping[str, str] | None = None) -> Options:
        """The options written after `NAME:` (the part `argument`), with defaults from `environ`
        (the process environment unless given) for options the spec does not set."""
        environ = os.environ if environ is None else environ
        argument = argument.strip()
        head, labels, rest = "", {}, argument
        if self.head == "MODEL":
            head, _, rest = argument.partition(",")
            head = head.strip()
        elif self.head == "PATH":
            head, _, mapping = argument.partition("::")
            labels, rest = self._labels_and_options(mapping)
            if not head:
                raise JudgeSetupError(f"give the model directory: {self.judge}:PATH or "
                                      f"{self.judge}:PATH::NAME=label,...")
        given: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not eq:
                if self.bare is None:
                    raise self._bad(part, "expected name=value")
                key, value = self.bare, part
            option = self.option(key)
            if option is None:
                raise self._bad(part, f"unknown option '{key}'")
            if option.name in given:
                raise self._bad(part, f"{option.name} is given twice")
            try:
                given[option.name] = option.kind.read(value)
            except ValueError:
                raise self._bad(part, f"{option.name} expects {option.kind.expected}, got {value!r}") from None
        values = {o.name: given[o.name] if o.name in given else _from_env(o, environ) for o in self.options}
        self._check_needs(values)
        return Options(self, values, head, labels)

    def _check_needs(self, values: Mapping[str, Any]) -> None:
        """An option set without the option it needs is refused when the spec is read, not when the judge
        is first asked (after the whole input was checked)."""
        for option in self.options:
            needed = option.needs and next(o for o in self.options if o.name == option.needs)
            if needed and values[option.name] is not None and values[needed.name] is None:
                variable = f" (or {needed.env})" if needed.env else ""
                raise JudgeSetupError(f"{self.judge} judge option {option.name} needs {needed.name}{variable}: "
                                      f"set it too, as in {self.written(needed)}; valid options: {self.usage()}")

    def _labels_and_options(self, mapping: str) -> tuple[dict[str, str], str]:
        """After PATH's '::': NAME=label pairs (the model's output names) mixed with this judge's options
        (threads=2); a known option name is an option, anything else a label mapping."""
        labels, options = [], []
        for item in filter(None, (i.strip() for i in mapping.split(","))):
            (options if self.option(item.partition("=")[0].strip()) else labels).append(item)
        return _label_mapping(",".join(labels)), ",".join(options)

    def of(self, head: str = "", labels: Mapping[str, str] | None = None, **keywords: Any) -> Options:
        """The same options given from Python, by constructor parameter (unset ones take defaults);
        checked as a parsed spec is."""
        by_parameter = {o.parameter: o for o in self.options}
        unknown = sorted(set(keywords) - set(by_parameter))
        if unknown:
            raise JudgeSetupError(f"{self.judge} judge: unknown option(s) {', '.join(unknown)}; "
                                  f"valid: {', '.join(by_parameter)}")
        values = {}
        for parameter, option in by_parameter.items():
            value = keywords.get(parameter, option.default)
            try:
                values[option.name] = option.check(value)
            except ValueError:
                raise JudgeSetupError(f"{self.judge} judge: {parameter} expects {option.kind.expected}, "
                                      f"got {value!r}") from None
        self._check_needs(values)
        return Options(self, values, head, dict(labels or {}))


def _from_env(option: Option, environ: Mapping[str, str]) -> Any:
    raw = environ.get(option.env) if option.env else None
    if not raw:  # unset or empty: the default
        return option.default
    try:
        return option.kind.read(raw.strip())
    except ValueError:
        raise JudgeSetupError(f"{option.env}: expected {option.kind.expected}, got {raw!r}") from None


def _label_mapping(mapping: str) -> dict[str, str]:
    """`NAME=label,NAME=label` (the part after '::') -> {NAME: label}."""
    override: dict[str, str] = {}
    for item in filter(None, mapping.split(",")):
        name, _, label = item.partition("=")
        if label not in LABELS:
            raise JudgeSetupError(f"label mapping {item!r}: '{label}' is not one of {', '.join(LABELS)}")
        if name in override:
            raise JudgeSetupError(f"label mapping {item!r}: {name} is given twice")
        override[name] = label
    return override
