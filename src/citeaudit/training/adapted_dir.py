"""The adapted judge written as a judge directory (`--judge model:path=DIR`): its weights exported to int8
ONNX (or the base's model file copied when only the calibration changed), calibration.json, and the card
(model_card.json with the hashes of the files the judge reads, MODEL_CARD.md); and the report's figures
as text, which the card and the command print alike."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from collections.abc import Sequence
from pathlib import Path

from citeaudit.judges.judge_dir import CHINESE_JUDGE_KEY
from citeaudit.records import file_sha256
from citeaudit.intervals import what_was_drawn
from citeaudit.training import forgetting, seen_claims
from citeaudit.training.bases import onnx_file
from citeaudit.training.finetune import MAX_LEN
from citeaudit.training.judge_parts import JudgeState


def write_judge(out: Path, base_dir: Path, state: JudgeState, report: dict, work: Path,
                team_claims: Sequence[str] = (), chinese_judge: str | None = None,
                int8_model: Path | None = None, held_chinese: Path | None = None) -> Path:
    """The judge directory, built in `work` (a hidden folder beside `out`, removed by the caller) and
    renamed into place; what it has seen is the base's claims and `team_claims` (training/seen_claims.py);
    `chinese_judge` named in its config.json when its Chinese pairs go to that judge (judges/model.py).
    `int8_model`: `state.model` as exported for the checks (`export_int8`), copied so that the judge
    written is byte for byte the one checked; the base's model file when there are no new weights.
    `held_chinese`: the adapted judge-v2 written for this judge's Chinese pairs, moved inside it (its
    folder named as `chinese_judge` names it)."""
    from citeaudit.training.export import SHIPPED_FILES

    built = work / "judge"
    built.mkdir()  # with the mode any new folder gets, as the judge's other readers expect
    if state.model is not None and int8_model is None:
        int8_model = export_int8(state.model, base_dir, work / "export" / "judge", work / "export")
    model_file, beside = (onnx_file(base_dir), base_dir) if state.model is None else (int8_model, int8_model.parent)
    for name in SHIPPED_FILES:  # the model file, and the tokenizer and config that go with it
        shutil.copyfile(model_file if name.endswith(".onnx") else beside / name, built / name)
    config = json.loads((built / "config.json").read_text(encoding="utf-8"))
    wanted = {k: v for k, v in config.items() if k != CHINESE_JUDGE_KEY}  # who judges Chinese is this judge's
    if chinese_judge:
        wanted[CHINESE_JUDGE_KEY] = chinese_judge
    if wanted != config:
        (built / "config.json").write_text(json.dumps(wanted, indent=1), encoding="utf-8")
    if held_chinese is not None:
        held_chinese.rename(built / chinese_judge)
    cal = replace(state.calibration, band=state.band, zh_threshold=state.zh_threshold,
                  fitted_on={**state.calibration.fitted_on, "adapted_from": report["base"],
                             "labels_sha256": report["labels"]["sha256"]})
    cal.save(built)
    seen_claims.add_claims(built, base_dir, team_claims,
                           f"adapt-judge on the team's labels (sha256 {report['labels']['sha256'][:12]})")
    _write_card(built, report, {name: file_sha256(built / name) for name in SHIPPED_FILES})
    if out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    built.rename(out)
    return out


def export_int8(model, base_dir: Path, dest: Path, work: Path) -> Path:
    """`model` as the judge's int8 ONNX model in `dest` (its path returned), by way of its transformers and
    fp32 ONNX forms in `work`: what the written judge runs, and what the adaptation judges with."""
    from citeaudit.training.export import export_fp32, libraries_quiet, quantize_int8

    hf = work / "hf"
    with libraries_quiet():  # transformers' progress bar for the weights it writes
        model.save_pretrained(hf)
    shutil.copyfile(base_dir / "tokenizer.json", hf / "tokenizer.json")
    export_fp32(hf, work / "fp32", MAX_LEN)
    int8 = quantize_int8(work / "fp32", dest)
    config = json.loads((base_dir / "config.json").read_text(encoding="utf-8"))
    (dest / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    return int8


def _write_card(work: Path, report: dict, files: dict[str, str]) -> None:
    """The card, with the hashes of the files the judge reads: loading checks them (judges/judge_dir.py)."""
    card = {"name": report["base"].get("name", "citeaudit model judge, adapted"), "adapted_from": report["base"],
            "labels": report["labels"],
            "plan": report["plan"], "settings": report["settings"], "adaptation": report.get("adaptation"),
            "cross_validation": report.get("cross_validation"), "forgetting": report.get("forgetting"),
            **({"chinese_adaptation": report["chinese_adaptation"]} if report.get("chinese_adaptation") else {}),
            "files": files}
    (work / "model_card.json").write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (work / "MODEL_CARD.md").write_text(render_card(card), encoding="utf-8")


def render_card(card: dict) -> str:
    labels = card["labels"]
    lines = ["# citeaudit model judge, adapted to a team's labels", "",
             f"- adapted from: `{card['adapted_from']['dir']}` (sha256 `{card['adapted_from']['sha256'][:16]}…`)",
             f"- labels: {labels['pairs']} pairs ({labels['described_as']}), sha256 `{labels['sha256'][:16]}…`; "
             f"English {labels['english']}, Chinese {labels['chinese']}",
             f"- {plan_line(card)}",
             *[f"- {reason}" for reason in card["plan"]["reasons"]], ""]
    lines += render_figures(card)
    return "\n".join(lines) + "\n"


def plan_line(report: dict) -> str:
    """What was done to each language's judge: "English: fine-tune; Chinese: …"."""
    plan, held = report["plan"], report.get("chinese_adaptation")
    chinese = (f"{held['plan']['english'] or 'unchanged'} ({plan['chinese_judge']}, held inside the judge)" if held
               else (plan["chinese"] or "unchanged") + (f" (judged by {plan['chinese_judge']})"
                                                        if plan.get("chinese_judge") else ""))
    return f"English: {plan['english'] or 'unchanged'}; Chinese: {chinese}"


def render_figures(report: dict) -> list[str]:
    """The cross-validated figures and the forgetting check, as text lines."""
    lines = []
    cv = report.get("cross_validation")
    if cv:
        lines.append(f"Cross-validated agreement with the team's labels ({cv['folds']} folds, pairs sharing a "
                     f"passage, question or claim kept together; fold sizes {cv['fold_sizes']}):")
        # a model that judges Chinese itself (judge-v2) has one route, its own, for every pair
        both = (report.get("labels") or {}).get("routes", "").startswith(BOTH_LANGUAGES)

        def route_lines(route: str, judges: dict[str, dict]) -> list[str]:
            return _route_lines("all" if both and route == "english" else route, judges)

        for route in ("english", "chinese"):
            lines += route_lines(route, cv.get(route) or {})
        lines += seen_claims.render_unseen(cv.get("seen"), route_lines)
    if report.get("forgetting"):
        lines += forgetting.render(report["forgetting"])
    held = report.get("chinese_adaptation")
    if held:  # judge-v2 adapted on the Chinese labels, held inside the judge: its own figures
        lines += [f"Chinese pairs: judge-v2 adapted on the {held['labels']['pairs']} Chinese labels "
                  f"({held['plan']['english'] or 'unchanged'}), held inside this judge:",
                  *[f"  {reason}" for reason in held["plan"]["reasons"]],
                  *(f"  {line}" for line in render_figures(held))]
    return lines


def _route_lines(route: str, judges: dict[str, dict]) -> list[str]:
    """A route's figures, a line per judge, and what their intervals drew (the same for every judge)."""
    if not judges:
        return []
    drawn = next(iter(judges.values())).get("resampling")
    return ([_figure_line(route, name, f) for name, f in judges.items()]
            + ([f"  {route:<8} intervals: bootstrap 95 %{what_was_drawn(drawn, 'pair', SHARING)}"] if drawn else []))


# how adapt.py's report says that the model judges Chinese pairs itself (judge-v2): its one route is all pairs
BOTH_LANGUAGES = "the model judges Chinese pairs itself"
# what puts a team's pairs in one group (team_labels.pair_groups), said of one pair and of many
SHARING = ("a passage, a question or a claim", "passages, questions or claims")


def _figure_line(route: str, name: str, f: dict) -> str:
    return (f"  {route:<8} {name:<13} n={f['n']:<4} BAcc {_fig(f['balanced_accuracy'], f['balanced_accuracy_ci'])}"
            f"  kappa {_fig(f['kappa'], f['kappa_ci'])}  uncertain {f['uncertain_share']:.0%}")


def _fig(value: float | None, ci) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
