"""A judge directory (`model:path=DIR`, the shipped judge-v1, `adapt-judge --base DIR`), read and checked
once, before any work.

A judge directory holds an ONNX model (`model_int8.onnx`, or another `.onnx`: see `MODEL_NAMES`),
`tokenizer.json` and `config.json`, and may hold `calibration.json`, a card (`model_card.json`) and
`trained_on.txt.gz`, the claims its judge trained and was calibrated on (judges/seen.py: not a file the
judge judges with, and no part of its signature). Each file must be present, a file, readable and of
its kind: the model a protobuf message with a graph, the tokenizer one the tokenizers library reads,
config.json a JSON object with a sound `id2label`, the calibration sound (judges/calibration.py checks
it), the claims a header and claim keys. Where the card records a file's SHA-256 (`files`,
as the exporter and `adapt-judge` write it), the file must still have it. Whatever is wrong is a
`JudgeSetupError` (exit code 2) naming each damaged file and what is wrong with it, never a runtime's
traceback from deep inside loading.

Reading and hashing every byte of a 22 MiB model takes a few tenths of a second, so a directory is checked
once per version of its files: the result is remembered under the directory's listing (names, sizes,
modification times).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.errors import JudgeSetupError
from citeaudit.extras import require
from citeaudit.judges import calibration as calib
from citeaudit.judges import seen
from citeaudit.judges.cache import BoundedCache

# The model file a directory's judge loads: the first of these present, else the first .onnx by name.
MODEL_NAMES = ("model.onnx", "model_quantized.onnx", "model_int8.onnx")
CARD = "model_card.json"
# config.json may name who judges the directory's Chinese pairs (judges/model.py): "judge-v2" (the shipped
# one), ADAPTED_CHINESE_JUDGE (judge-v2 adapted on a team's Chinese labels, a judge directory of its own
# in the folder of that name inside this one), or no one
CHINESE_JUDGE_KEY = "chinese_judge"
ADAPTED_CHINESE_JUDGE = "judge-v2-adapted"
LAYOUT = "a judge directory holds an .onnx model, tokenizer.json and config.json (docs/model-judge.md)"
_SHA256 = re.compile(r"[0-9a-f]{64}")
# ModelProto's fields: ir_version (1, a varint) and graph (7, a length-delimited message) are always there
_IR_VERSION, _GRAPH = (1, 0), (7, 2)


@dataclass(frozen=True)
class JudgeDir:
    """A judge directory that passed every check, with what was read from it."""

    path: Path
    model_file: Path
    config: dict[str, Any]
    calibration: calib.Calibration | None
    card: dict[str, Any] | None


_checked: BoundedCache[tuple, JudgeDir] = BoundedCache(32)


def load_judge_dir(path: str | os.PathLike[str]) -> JudgeDir:
    """The judge directory at `path`, every file checked (see the module's docstring); a JudgeSetupError
    names each damaged file and what is wrong with it. Checked once per version of its files."""
    path = Path(path)
    if not path.is_dir():
        raise JudgeSetupError(f"{path}: {'not a directory' if path.exists() else 'no such directory'}; {LAYOUT}")
    try:
        listing = tuple(sorted((e.name, e.is_dir(), stat.st_size, stat.st_mtime_ns)
                               for e in os.scandir(path) for stat in [e.stat()]))
    except OSError as err:
        raise JudgeSetupError(f"{path}: cannot read the directory ({err.strerror})") from None
    key = (str(path.resolve()), listing)
    found = _checked.get(key)
    return found if found is not None else _checked.put(key, _check(path))


def model_file(path: Path) -> Path | None:
    """The .onnx file the directory's judge loads (None: there is none)."""
    named = next((path / n for n in MODEL_NAMES if (path / n).exists()), None)
    return named or next(iter(sorted(path.glob("*.onnx"))), None)


def _check(path: Path) -> JudgeDir:
    problems: dict[str, str] = {}  # file name -> what is wrong with it (one problem a file)
    card = _card(path, problems)
    recorded = _recorded_hashes(card, problems)
    model = model_file(path)
    # without any .onnx, the one the card records (else the shipped name) is the one missing
    model_name = model.name if model else next((n for n in recorded if n.endswith(".onnx")), MODEL_NAMES[-1])
    data = {name: _read(path / name, problems) for name in sorted({model_name, "tokenizer.json", "config.json",
                                                                   *recorded})}
    config = _config(data["config.json"], problems)
    for name, problem_of in ((model_name, _onnx_problem), ("tokenizer.json", _tokenizer_problem)):
        problem = problem_of(data[name]) if data[name] is not None else None
        if problem:
            problems[name] = problem
    for name, expected in recorded.items():
        if data[name] is not None and name not in problems:
            actual = hashlib.sha256(data[name]).hexdigest()
            if actual != expected:
                problems[name] = (f"sha256 {actual[:12]}… is not the {expected[:12]}… that {CARD} records for it: "
                                  f"the file was changed after the judge was written (restore it, or take its entry "
                                  f"out of {CARD}'s files)")
    fitted = None
    try:
        fitted = calib.load(path)  # None without one
    except JudgeSetupError as err:  # its own checks, which name the file
        problems[calib.FILE_NAME] = str(err).removeprefix(f"{path / calib.FILE_NAME}: ")
    try:  # not read to judge; checked so that the reports that read it never meet a damaged one late
        seen.read_seen(path)
    except JudgeSetupError as err:
        problems[seen.FILE_NAME] = str(err).removeprefix(f"{path / seen.FILE_NAME}: ")
    inner = ""
    if config.get(CHINESE_JUDGE_KEY) == ADAPTED_CHINESE_JUDGE:  # the adapted Chinese judge is checked as one
        try:
            load_judge_dir(path / ADAPTED_CHINESE_JUDGE)
        except JudgeSetupError as err:
            inner = f"{path / 'config.json'}: {CHINESE_JUDGE_KEY} names {ADAPTED_CHINESE_JUDGE}, which is damaged:\n{err}"
    if problems or inner:
        missing = any(problems.get(n, "").startswith("missing") for n in (model_name, "tokenizer.json", "config.json"))
        raise JudgeSetupError("\n".join([*(f"{path / name}: {problem}" for name, problem in sorted(problems.items())),
                                         *([inner] if inner else [])]) + (f"; {LAYOUT}" if missing else ""))
    return JudgeDir(path, path / model_name, config, fitted, card)


def _read(file: Path, problems: dict[str, str]) -> bytes | None:
    """The file's bytes, or None with its problem noted (missing, a folder, unreadable, empty)."""
    if not file.exists():
        problems[file.name] = "missing"
    elif not file.is_file():
        problems[file.name] = "a folder, not a file"
    else:
        try:
            data = file.read_bytes()
        except OSError as err:
            problems[file.name] = f"cannot read it ({err.strerror})"
            return None
        if data:
            return data
        problems[file.name] = "empty"
    return None


def _json(data: bytes, name: str, problems: dict[str, str]) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        problems[name] = "not UTF-8 text"
    except json.JSONDecodeError as err:
        problems[name] = f"not valid JSON ({err.msg}, line {err.lineno} column {err.colno})"
    return None


def _card(path: Path, problems: dict[str, str]) -> dict[str, Any] | None:
    """The card, when the directory has one (a directory without one is checked without its hashes)."""
    if not (path / CARD).exists():
        return None
    data = _read(path / CARD, problems)
    card = None if data is None else _json(data, CARD, problems)
    if card is not None and not isinstance(card, dict):
        problems[CARD] = f"expected a JSON object, found {type(card).__name__}"
        return None
    return card


def _recorded_hashes(card: dict[str, Any] | None, problems: dict[str, str]) -> dict[str, str]:
    """What the card's `files` records: file name -> SHA-256."""
    files = (card or {}).get("files")
    if files is None:
        return {}
    if not (isinstance(files, dict) and all(isinstance(n, str) and "/" not in n and "\\" not in n
                                            and isinstance(h, str) and _SHA256.fullmatch(h)
                                            for n, h in files.items())):
        problems[CARD] = "files: expected an object of file names and their SHA-256 (64 hex digits)"
        return {}
    return dict(files)


def _config(data: bytes | None, problems: dict[str, str]) -> dict[str, Any]:
    config = None if data is None else _json(data, "config.json", problems)
    if config is None:
        return {}
    if not isinstance(config, dict):
        problems["config.json"] = f"expected a JSON object, found {type(config).__name__}"
        return {}
    labels = config.get("id2label", {})
    if not (isinstance(labels, dict) and labels and all(re.fullmatch(r"[0-9]+", k) and isinstance(v, str) and v
                                                         for k, v in labels.items())):
        problems["config.json"] = f"id2label: expected an object of class numbers and names, found {labels!r}"[:200]
    length = config.get("max_position_embeddings", 512)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        problems["config.json"] = f"max_position_embeddings: expected a positive integer, found {length!r}"[:200]
    chinese = config.get(CHINESE_JUDGE_KEY, "judge-v2")
    if chinese not in ("judge-v2", ADAPTED_CHINESE_JUDGE):
        problems["config.json"] = (f"{CHINESE_JUDGE_KEY}: expected \"judge-v2\", \"{ADAPTED_CHINESE_JUDGE}\" or no "
                                   f"such key, found {chinese!r}")[:200]
    return config


def _onnx_problem(data: bytes) -> str | None:
    """What keeps `data` from being an ONNX model, read as far as its top-level fields (a protobuf parser
    checks the wire format of the whole file, so a cut or overwritten file fails here)."""
    require("google.protobuf", "model", "the model judge")
    from google.protobuf import empty_pb2
    from google.protobuf.message import DecodeError
    from google.protobuf.unknown_fields import UnknownFieldSet

    try:
        fields = {(f.field_number, f.wire_type) for f in UnknownFieldSet(empty_pb2.Empty.FromString(data))}
    except DecodeError:
        return "not an ONNX model: its protobuf encoding is broken (a truncated or damaged file)"
    if not {_IR_VERSION, _GRAPH} <= fields:
        return "not an ONNX model: it holds no graph"
    return None


def _tokenizer_problem(data: bytes) -> str | None:
    tokenizers = require("tokenizers", "model", "the model judge")
    try:
        tokenizers.Tokenizer.from_str(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "not a tokenizer: not UTF-8 text"
    except Exception as err:  # the tokenizers library raises a bare Exception for a tokenizer it cannot read
        return f"not a tokenizer the tokenizers library reads ({str(err).strip()[:160]})"
    return None
