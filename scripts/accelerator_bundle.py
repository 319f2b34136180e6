"""The pieces of `scripts/train-on-accelerator.sh`: what is built here for a retraining of the model
judge on an accelerator machine, and what is done there and back here again.

    bundle BUNDLE [--base NAME|DIR] [--data-dir DIR] [--nli-sets large] [--nli-ratio R] ...
        here: the base (packed), the training mix, the dev rows and the train-judge options (plan.env)
    pack-base DIR TARGET / unpack-base PACKED TARGET
        a base model directory <-> its packed form: weights rounded to bf16, the high bytes deflated
    split JUDGE_DIR TARGET / join PIECES_DIR TARGET
        a judge directory <-> pieces of at most 15 MiB (a file over 16 MiB does not come back from that
        machine); `join` checks every file against the sha256 in model_card.json
    size BUNDLE
        what a run on the accelerator machine would carry (the tracked and untracked-not-ignored files, and BUNDLE) against
        its 64 MiB limit; exits 1 when over

Why packed: a run there carries at most 64 MiB with the working tree, which already holds about
25 MiB (the shipped judge); all-MiniLM-L6-v2's fp32 weights are 87 MiB. Rounded to bf16 they are half
that, and the high bytes (sign and exponent) deflate to about a third, 30 MiB in all. The run trains
in bf16 autocast, which rounds the weights of every matrix product to bf16 anyway; the fp32 master
weights start from the rounded values. base.json records the sha256 of the original weights and the
model card says the base was carried rounded.

Needs numpy and safetensors (both here and there); `bundle` also needs citeaudit's `train` extra.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

LIMIT = 64 * 2**20  # what one run there carries, working tree included
PIECE = 15 * 2**20  # a file that comes back is at most 16 MiB
TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                   "merges.txt", "sentencepiece.bpe.model", "spiece.model")
JUDGE_FILES = ("model_int8.onnx", "tokenizer.json", "config.json", "calibration.json", "MODEL_CARD.md",
               "model_card.json")
ROUNDING_NOTE = ("the fp32 weights rounded to bf16 (nearest, ties to even) to fit the 64 MiB an accelerator call "
                 "carries; bf16 autocast rounds them so for every matrix product anyway")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- the base -------------------------------------------------------------------------------------

def pack_base(source: Path, target: Path, note: dict | None = None) -> dict:
    """TARGET gets the tokenizer and config files of SOURCE, model.bf16.json (tensor names, shapes),
    model.bf16.hi.z (the high bytes of the bf16 values, deflated), model.bf16.lo (the low bytes),
    model.other.safetensors (tensors that are not float32, verbatim) and base.json."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(source / "model.safetensors"))
    target.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        if (source / name).exists():
            shutil.copyfile(source / name, target / name)
    names = sorted(k for k, v in weights.items() if v.dtype == np.float32)
    others = {k: v for k, v in weights.items() if v.dtype != np.float32}
    bits = np.concatenate([weights[k].reshape(-1).view(np.uint32) for k in names])
    # round to nearest, ties to even; no weight is NaN or infinite (checked)
    if not np.isfinite(bits.view(np.float32)).all():
        raise SystemExit(f"{source}: a weight is not finite")
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    (target / "model.bf16.hi.z").write_bytes(zlib.compress((rounded >> 8).astype(np.uint8).tobytes(), 9))
    (target / "model.bf16.lo").write_bytes((rounded & 0xFF).astype(np.uint8).tobytes())
    (target / "model.bf16.json").write_text(json.dumps(
        [{"name": k, "shape": list(weights[k].shape)} for k in names], indent=0))
    if others:
        save_file(others, str(target / "model.other.safetensors"))
    base = {**(note or {}), "source_sha256": _sha256(source / "model.safetensors"), "note": ROUNDING_NOTE}
    (target / "base.json").write_text(json.dumps(base, indent=1))
    return base


def unpack_base(packed: Path, target: Path) -> Path:
    """A base directory (fp32 model.safetensors of the bf16 values) from `pack_base`'s output."""
    import numpy as np
    from safetensors.numpy import load_file, save_file

    layout = json.loads((packed / "model.bf16.json").read_text())
    hi = np.frombuffer(zlib.decompress((packed / "model.bf16.hi.z").read_bytes()), dtype=np.uint8)
    lo = np.frombuffer((packed / "model.bf16.lo").read_bytes(), dtype=np.uint8)
    values = ((hi.astype(np.uint32) << 24) | (lo.astype(np.uint32) << 16)).view(np.float32)
    tensors, at = {}, 0
    for entry in layout:
        n = int(np.prod(entry["shape"], dtype=np.int64))
        tensors[entry["name"]] = values[at: at + n].reshape(entry["shape"])
        at += n
    if at != len(values):
        raise SystemExit(f"{packed}: {len(values)} values for {at} in model.bf16.json")
    if (packed / "model.other.safetensors").exists():
        tensors.update(load_file(str(packed / "model.other.safetensors")))
    target.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(target / "model.safetensors"), metadata={"format": "pt"})
    for name in (*TOKENIZER_FILES, "base.json"):
        if (packed / name).exists():
            shutil.copyfile(packed / name, target / name)
    return target


# --- the bundle -----------------------------------------------------------------------------------

# 2,400 steps of 64: about 3 epochs of the large mix (51,744 examples); --fit-steps lowers them if the
# 5 minutes do not hold them. lr 8e-5: judge-v1's 4e-5 at batch 16, scaled by the square root of 4.
DEFAULT_TRAIN_OPTIONS = ("--device cuda --steps 2400 --fit-steps --time-budget 5 --batch-size 64 --lr 8e-5 "
                         "--checkpoint 1000")


def bundle(target: Path, base: str, data_dir: str | None, nli_sets: str, nli_ratio: float, per_source_cap: int,
           unstated_licence_nli: bool, seed: int, train_options: str) -> None:
    """TARGET/base (packed), TARGET/mix (mix.jsonl.xz, manifest.json), TARGET/dev.jsonl.gz and
    TARGET/plan.env (the train-judge options of the run)."""
    from citeaudit.training.bases import resolve_base
    from citeaudit.training.data import load_all, split_rows
    from citeaudit.training.train import build_mix, write_mix
    from transformers import AutoTokenizer

    base_dir, record = resolve_base(base)
    target.mkdir(parents=True, exist_ok=True)
    print(f"packing the base {record['name']} ({base_dir}) ...", file=sys.stderr)
    pack_base(base_dir, target / "base", {k: record[k] for k in ("name", "description", "licence")})
    tokenizer = AutoTokenizer.from_pretrained(base_dir)

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    print("building the mix ...", file=sys.stderr)
    examples, manifest = build_mix(data_dir, nli_ratio=nli_ratio, seed=seed, per_source_cap=per_source_cap,
                                   count=count, nli_sets=nli_sets, unstated_licence_nli=unstated_licence_nli,
                                   pair_specials=tokenizer.num_special_tokens_to_add(pair=True))
    manifest["tokenizer_sha256"] = _sha256(base_dir / "tokenizer.json")
    write_mix(target / "mix", examples, manifest, compress=True)
    dev = split_rows(load_all(data_dir))["dev"]
    with gzip.GzipFile(target / "dev.jsonl.gz", "wb", mtime=0) as fh:
        for row in dev:
            fh.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
    (target / "plan.env").write_text(
        "# the train-judge options of the run (read by scripts/train-on-accelerator.sh run)\n"
        f"TRAIN_OPTIONS='{train_options} --seed {seed}'\n")
    print(f"mix: {len(examples)} examples; dev rows: {len(dev)}; plan: {train_options} --seed {seed}",
          file=sys.stderr)


def travel_size(bundle_dir: Path, root: Path) -> dict:
    """Bytes a run on the accelerator machine carries: tracked and untracked-not-ignored files, and the bundle."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.split(b"\0")
    tree = sum((root / p.decode()).stat().st_size for p in listed if p and (root / p.decode()).is_file())
    carried = sum(p.stat().st_size for p in bundle_dir.rglob("*") if p.is_file())
    return {"working_tree": tree, "bundle": carried, "total": tree + carried, "limit": LIMIT}


# --- the judge directory, there and back ----------------------------------------------------------

def split_judge(judge: Path, target: Path) -> list[Path]:
    """Copy the judge directory's files into TARGET, cutting any over PIECE bytes into NAME.001, .002, ..."""
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in JUDGE_FILES:
        data = (judge / name).read_bytes()
        if len(data) <= PIECE:
            (target / name).write_bytes(data)
            written.append(target / name)
            continue
        for i in range(0, len(data), PIECE):
            piece = target / f"{name}.{i // PIECE + 1:03d}"
            piece.write_bytes(data[i: i + PIECE])
            written.append(piece)
    return written


def join_judge(pieces: Path, target: Path) -> Path:
    """The judge directory again from `split_judge`'s files, each checked against model_card.json."""
    target.mkdir(parents=True, exist_ok=True)
    for name in JUDGE_FILES:
        parts = sorted(pieces.glob(f"{name}.[0-9][0-9][0-9]"))
        if (pieces / name).exists():
            shutil.copyfile(pieces / name, target / name)
        elif parts:
            with (target / name).open("wb") as out:
                for part in parts:
                    out.write(part.read_bytes())
        else:
            raise SystemExit(f"{pieces}: no {name} and no pieces of it")
    card = json.loads((target / "model_card.json").read_text())
    for name, sha in card.get("files", {}).items():
        if _sha256(target / name) != sha:
            raise SystemExit(f"{target / name}: sha256 differs from model_card.json (a piece is missing or cut)")
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    b = sub.add_parser("bundle")
    b.add_argument("target", type=Path)
    b.add_argument("--base", default="minilm-l6")
    b.add_argument("--data-dir")
    b.add_argument("--nli-sets", default="large")
    b.add_argument("--nli-ratio", type=float, default=10)
    b.add_argument("--per-source-cap", type=int, default=4000)
    b.add_argument("--unstated-licence-nli", action="store_true")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--train-options", default=DEFAULT_TRAIN_OPTIONS)
    for verb in ("pack-base", "unpack-base", "split", "join"):
        p = sub.add_parser(verb)
        p.add_argument("source", type=Path)
        p.add_argument("target", type=Path)
    s = sub.add_parser("size")
    s.add_argument("bundle", type=Path)
    args = parser.parse_args(argv)
    if args.verb == "bundle":
        bundle(args.target, args.base, args.data_dir, args.nli_sets, args.nli_ratio, args.per_source_cap,
               args.unstated_licence_nli, args.seed, args.train_options)
    elif args.verb == "pack-base":
        pack_base(args.source, args.target)
    elif args.verb == "unpack-base":
        unpack_base(args.source, args.target)
    elif args.verb == "split":
        for path in split_judge(args.source, args.target):
            print(path)
    elif args.verb == "join":
        print(join_judge(args.source, args.target))
    elif args.verb == "size":
        size = travel_size(args.bundle, Path.cwd())
        mib = {k: round(v / 2**20, 1) for k, v in size.items()}
        print(f"an accelerator run carries {mib['total']} MiB of {mib['limit']} MiB: working tree {mib['working_tree']} MiB, "
              f"{args.bundle} {mib['bundle']} MiB")
        if size["total"] > LIMIT:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
