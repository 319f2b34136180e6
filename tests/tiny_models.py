"""A tiny BERT classifier built and saved by the tests themselves (random weights, real config and
tokenizer files), in transformers and ONNX form: no hub download works offline."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from citeaudit.examples import EXAMPLE_FILES, example_text

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _vocab() -> list[str]:
    words = set()
    for name in EXAMPLE_FILES:
        words |= set(re.findall(r"\w+|[^\w\s]", example_text(name).lower()))
    chars = {c for w in words for c in w}
    return SPECIALS + sorted(words) + sorted("##" + c for c in chars) + sorted(chars - words)


def build_hf(path: Path, labels=("entailment", "neutral", "contradiction"), seed: int = 0) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(_vocab()) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True, model_max_length=128)
    config = BertConfig(vocab_size=len(_vocab()), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, num_labels=len(labels),
                        id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    torch.manual_seed(seed)
    BertForSequenceClassification(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def export_onnx(hf_path: Path, path: Path) -> Path:
    import torch
    from transformers import BertForSequenceClassification

    path.mkdir(parents=True, exist_ok=True)
    model = BertForSequenceClassification.from_pretrained(hf_path).eval()
    model.config.return_dict = False
    ids = torch.ones(1, 8, dtype=torch.long)
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(model, (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(path / "model.onnx"),
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes}, dynamo=False)
    for name in ("tokenizer.json", "config.json"):
        shutil.copy(hf_path / name, path / name)
    return path


def relabel(path: Path, labels: dict[int, str]) -> None:
    config = json.loads((path / "config.json").read_text())
    config["id2label"] = {str(k): v for k, v in labels.items()}
    (path / "config.json").write_text(json.dumps(config))


def xlmr_tokenizer(extra_words=()):
    """A tiny tokenizer of multilingual-e5-small's kind (training/bases.py): Unigram pieces (the example
    texts' words after the word-start marker, and their characters), `<s> A </s></s> B </s>`."""
    from citeaudit.training.bases import META, SPECIALS, e5_tokenizer

    words = sorted({w for w in _vocab()[len(SPECIALS):] if not w.startswith("##")} | set(extra_words))
    chars = sorted({c for w in words for c in w})
    pieces = [*SPECIALS, META, *(META + w for w in words), *chars]
    scores = [0.0] * len(SPECIALS) + [-3.0] + [-1.0] * len(words) + [-5.0] * len(chars)
    return e5_tokenizer(pieces, scores, {ord("\t"): " ", ord("\n"): " "})


def build_xlmr(path: Path, labels=("entailment", "neutral", "contradiction"), seed: int = 0,
               extra_words=(), positions: int = 128) -> Path:
    """A tiny BERT over `xlmr_tokenizer` (a classifier when `labels`, else a bare encoder, as a base is),
    saved as transformers saves it, the tokenizer wrapped as PreTrainedTokenizerFast."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel, PreTrainedTokenizerFast

    tokenizer = xlmr_tokenizer(extra_words)
    config = BertConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=positions,
                        pad_token_id=1, **({"num_labels": len(labels), "id2label": dict(enumerate(labels)),
                                            "label2id": {l: i for i, l in enumerate(labels)}} if labels else {}))
    torch.manual_seed(seed)
    (BertForSequenceClassification if labels else BertModel)(config).eval().save_pretrained(path)
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                            cls_token="<s>", unk_token="<unk>", pad_token="<pad>",
                            model_max_length=positions).save_pretrained(path)
    return path
