"""A judge directory that is not a judge (judges/judge_dir.py): each damaged file named, with what is wrong
with it, exit code 2 and no traceback, the same from every command that names one (`--judge
model:path=DIR`, `adapt-judge --base DIR`); sound directories, with a card or without, still load."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from citeaudit.cli import main  # noqa: E402
from citeaudit.errors import JudgeSetupError  # noqa: E402
from citeaudit.judges import parse_judge  # noqa: E402
from citeaudit.judges.judge_dir import load_judge_dir  # noqa: E402
from citeaudit.judges.model import ModelJudge, shipped_model_dir  # noqa: E402

LABELS = Path(__file__).parent / "fixtures" / "judge_validation_sample.jsonl"
ONNX = "model_int8.onnx"


def _truncate(d: Path) -> None:
    data = (d / ONNX).read_bytes()
    (d / ONNX).write_bytes(data[: len(data) // 2])


def _folder_for_the_model(d: Path) -> None:
    (d / ONNX).unlink()
    (d / ONNX).mkdir()


def _edit_config(d: Path) -> None:  # still sound JSON, but not the file the card records
    config = json.loads((d / "config.json").read_text())
    (d / "config.json").write_text(json.dumps({**config, "note": "edited"}))


def _write(name: str, text: str):
    return lambda d: (d / name).write_text(text)


def _gzip(name: str, text: str):
    return lambda d: (d / name).write_bytes(gzip.compress(text.encode()))


# damage, the file it names, what is said of it (a pattern)
DAMAGES = {
    "truncated onnx": (_truncate, ONNX, r"not an ONNX model: its protobuf encoding is broken \(a truncated"),
    "garbage onnx": (lambda d: (d / ONNX).write_bytes(bytes(range(256)) * 64), ONNX,
                     "not an ONNX model: its protobuf encoding is broken"),
    "text in place of the onnx": (_write(ONNX, "not a model\n"), ONNX, "not an ONNX model"),
    "empty onnx": (_write(ONNX, ""), ONNX, "empty"),
    "folder in place of the onnx": (_folder_for_the_model, ONNX, "a folder, not a file"),
    "onnx missing": (lambda d: (d / ONNX).unlink(), ONNX, "missing; a judge directory holds an .onnx model"),
    "config.json not JSON": (_write("config.json", "{id2label: full}"), "config.json", r"not valid JSON \(Expecting"),
    "config.json without classes": (_write("config.json", '{"id2label": []}'), "config.json",
                                    r"id2label: expected an object of class numbers and names, found \[\]"),
    "tokenizer.json wrong shape": (_write("tokenizer.json", '{"model": 1}'), "tokenizer.json",
                                   r"not a tokenizer the tokenizers library reads \(data did not match"),
    "tokenizer.json missing": (lambda d: (d / "tokenizer.json").unlink(), "tokenizer.json", "missing"),
    "hash mismatch with the card": (_edit_config, "config.json",
                                    r"sha256 [0-9a-f]{12}… is not the 12d652d3d696… that model_card.json records"),
    "card not JSON": (_write("model_card.json", "{"), "model_card.json", "not valid JSON"),
    "calibration.json not JSON": (_write("calibration.json", "[1, 2"), "calibration.json", "not valid JSON"),
    "calibration.json without its keys": (_write("calibration.json", '{"weights": [1, 2]}'), "calibration.json",
                                          r"features: expected \['logit_p_full', 'claim_word_recall'\], found None"),
    # the claims the judge trained on: not read to judge, but a damaged record is named before any work
    "trained_on.txt.gz not gzip": (_write("trained_on.txt.gz", "claims"), "trained_on.txt.gz",
                                   "cannot read it as gzipped text"),
    "trained_on.txt.gz with a line that is no claim": (
        _gzip("trained_on.txt.gz", "# citeaudit trained-on claims v1: x\nAlpha holds.\n"), "trained_on.txt.gz",
        r"line 2: expected a claim key \(16 hex digits\), found 'Alpha holds.'"),
}


def judge_copy(tmp_path: Path, copy_model: bool = False) -> Path:
    """The shipped judge's files in a folder of the test's; the 22 MiB model only linked to unless
    `copy_model` (a damage that writes to it must have its own copy, never write through the link)."""
    d = tmp_path / "judge"
    d.mkdir()
    for f in shipped_model_dir().iterdir():
        if f.name == ONNX and not copy_model:
            (d / ONNX).symlink_to(f)
        else:
            shutil.copyfile(f, d / f.name)
    return d


def damaged(tmp_path: Path, damage: str) -> tuple[Path, Path, str]:
    """A copy of the shipped judge with one file damaged: (directory, the damaged file, what is said)."""
    do, name, said = DAMAGES[damage]
    d = judge_copy(tmp_path, copy_model=name == ONNX)
    do(d)
    return d, d / name, said


def _cases(runner, tmp_path: Path) -> Path:
    assert runner.invoke(main, ["examples", "--write", str(tmp_path / "cases")]).exit_code == 0
    return tmp_path / "cases" / "p7_archive.json"


COMMANDS = {
    "score": lambda d, cases, tmp: ["score", str(cases), "--judge", f"model:path={d}"],
    "prepare": lambda d, cases, tmp: ["prepare", str(cases), "--judge", f"model:path={d},guard=off",
                                      "--store", str(tmp / "store.db")],
    "score with a cascade": lambda d, cases, tmp: ["score", str(cases), "--judge", f"cascade:model:path={d},human"],
    "adapt-judge --base": lambda d, cases, tmp: ["adapt-judge", str(LABELS), "--base", str(d),
                                                 "--out", str(tmp / "adapted")],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_judge_directory_is_refused_naming_the_file(runner, tmp_path, damage, command):
    d, file, said = damaged(tmp_path, damage)
    result = runner.invoke(main, COMMANDS[command](d, _cases(runner, tmp_path), tmp_path))
    assert result.exit_code == 2, result.output
    assert re.search(f"^citeaudit: {re.escape(str(file))}: {said}", result.output, re.M), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    assert "summary" not in result.output and not (tmp_path / "store.db").exists()  # refused before any work
    assert not (tmp_path / "adapted").exists()


def test_the_desk_refuses_it_too(tmp_path):
    from citeaudit.cli import desk_session

    d, file, said = damaged(tmp_path, "truncated onnx")
    with pytest.raises(JudgeSetupError, match=f"^{re.escape(str(file))}: {said}"):
        desk_session([], f"model:path={d}")


def test_from_python_the_same_error(tmp_path):
    d, file, said = damaged(tmp_path, "tokenizer.json wrong shape")
    with pytest.raises(JudgeSetupError, match=f"^{re.escape(str(file))}: {said}"):
        ModelJudge(path=d)


def test_every_damaged_file_is_named_at_once(tmp_path):
    d, _, _ = damaged(tmp_path, "truncated onnx")
    (d / "config.json").write_text("{")
    with pytest.raises(JudgeSetupError) as err:
        load_judge_dir(d)
    assert str(err.value).splitlines() == [f"{d / 'config.json'}: not valid JSON (Expecting property name enclosed "
                                           "in double quotes, line 1 column 2)",
                                           f"{d / ONNX}: not an ONNX model: its protobuf encoding is broken (a "
                                           "truncated or damaged file)"]


@pytest.mark.parametrize("path, said", [("nowhere", "no such directory"), ("file.txt", "not a directory")])
def test_a_path_that_is_no_directory_says_what_a_judge_directory_holds(tmp_path, path, said):
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(JudgeSetupError, match=f"{said}; a judge directory holds an .onnx model, tokenizer.json"):
        parse_judge(f"model:path={tmp_path / path}")


def test_the_shipped_judge_and_a_directory_without_a_card_pass(tmp_path):
    shipped = load_judge_dir(shipped_model_dir())
    assert shipped.model_file.name == ONNX and shipped.calibration is not None
    assert (shipped.path / "trained_on.txt.gz").is_file()  # the claims it trained on: no file the card records
    assert set(shipped.card["files"]) == {ONNX, "tokenizer.json", "config.json"}
    d = judge_copy(tmp_path)
    (d / "model_card.json").unlink()
    _edit_config(d)  # no card: nothing records a hash, the other checks apply
    assert load_judge_dir(d).card is None
    assert parse_judge(f"model:path={d}").options["path"] == str(d)


def test_a_directory_is_checked_once_per_version_of_its_files(tmp_path):
    d = judge_copy(tmp_path)
    first = load_judge_dir(d)
    assert load_judge_dir(d) is first  # the model is not read and hashed again
    (d / "config.json").write_text((d / "config.json").read_text() + "\n")  # a new size: read again
    with pytest.raises(JudgeSetupError, match="config.json: sha256 .* is not the .* that model_card.json records"):
        load_judge_dir(d)


def test_a_run_log_s_spec_is_read_without_its_files():
    """A run log names its judge; the files may be elsewhere (repair replays its judgments then)."""
    spec = parse_judge("model:path=/no/such/judge", read_files=False)
    assert spec.options["path"] == "/no/such/judge"
    with pytest.raises(JudgeSetupError, match="no such directory"):
        parse_judge("model:path=/no/such/judge")
