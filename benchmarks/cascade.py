"""The model judge's uncertain band and the cascade to a second judge, measured on the dev split.

    python benchmarks/cascade.py [--rows N] [--band 0.13]

Judges N English dev rows (a fixed sample) with `cascade:model,openai:…`, the remote judge served by
the local stand-in server (citeaudit.testing.OpenAIStub, no network) answering each pair with its gold label: a
perfect second judge, so the gain printed is the most escalation can buy. Prints the share of pairs
that escalate, the model's accuracy (full vs rest) on them, and the accuracy of the model alone and
of the cascade; a real second judge of accuracy a gains (a - model's accuracy on them) per pair.
"""

from __future__ import annotations

import argparse

from citeaudit.judges.base import Request
from citeaudit.judges.cascade import CascadeJudge
from citeaudit.judges.model import make_model_judge
from citeaudit.judges.remote import OpenAIJudge
from citeaudit.testing import OpenAIStub
from citeaudit.training.data import dev_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--band", type=float, default=None)
    args = parser.parse_args()
    rows = dev_rows(lang="en", limit=args.rows)
    gold = {(r.claim, frozenset(p.text for p in r.passages)): r.label for r in rows}

    def oracle(claim: str, passages: dict[str, str]) -> dict:
        label = gold.get((claim, frozenset(passages.values())), "none")
        return {"label": label, "evidence": None, "explanation": "the gold label"}

    model = make_model_judge("threads=2" + (f",band={args.band}" if args.band is not None else ""))
    requests = [Request.of(r.claim, r.passages) for r in rows]
    alone = model.judge_batch(requests)
    with OpenAIStub(oracle) as stub:
        remote = OpenAIJudge("stub-oracle", base_url=stub.url, timeout=10, max_retries=0)
        cascade = CascadeJudge(model, remote)
        both = cascade.judge_batch(requests)
        sent = stub.count

    def right(judgments, ix) -> int:
        return sum((j.label == "full") == (rows[i].label == "full") for i, j in zip(ix, (judgments[i] for i in ix)))

    everything = range(len(rows))
    hard = [i for i, j in enumerate(alone) if j.uncertain]
    print(f"judge: {model.signature}")
    print(f"rows {len(rows)}; escalated {len(hard)} ({100 * len(hard) / len(rows):.1f} %), requests sent {sent}")
    print(f"model accuracy on the escalated pairs: {right(alone, hard) / max(len(hard), 1):.3f}")
    print(f"model alone: accuracy {right(alone, everything) / len(rows):.3f}; "
          f"on the pairs it is sure of: {right(alone, [i for i in everything if i not in hard]) / max(len(rows) - len(hard), 1):.3f}")
    gained = right(both, everything) - right(alone, everything)
    print(f"cascade (perfect second judge): accuracy {right(both, everything) / len(rows):.3f}; "
          f"{gained} more right, {gained / max(len(hard), 1):.3f} per escalated pair")


if __name__ == "__main__":
    main()
