"""Log loss and Brier per season of several models on one history, replayed as one run.

A history's seasons are the spans between its `{"event": "season"}` lines (`synelo import
frc` writes one before each year after the first). Each model replays the whole history at
its defaults (or with `model:key=value:…` parameters); the first `--warmup` matches are
learned from and never scored, as in `synelo replay`. The table gives each scored season's
log loss (decided matches) and Brier (every match), the best of each row in bold, then the
pooled figures over the scored seasons, and how many seasons the first model beats each
other one in. docs/evaluation.md's FRC table is this script's output:

    synelo import frc ../shared/data/frc/*.csv -o frc.jsonl
    .venv/bin/python scripts/season_table.py frc.jsonl --warmup 8748 margin epa synelo elo …
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

import numpy as np

from synelo.evaluation.adapters import HistoryInfo, create_replay, parse_options
from synelo.evaluation.history import Match, read_history
from synelo.evaluation.replay import replay
from synelo.models import MODELS


def season_labels(matches: Sequence[Match]) -> list[str]:
    """Each match's season: the year its first match's id starts with (FRC's keys), else its
    number (1 before the first season event)."""
    labels, number, label = [], 1, None
    for match in matches:
        if any(event.kind == "season" for event in match.events) or label is None:
            if label is not None:
                number += 1
            year = re.match(r"^(\d{4})", match.id)
            label = year.group(1) if year else str(number)
        labels.append(label)
    return labels


def parse_model(spec: str) -> tuple[str, dict[str, str]]:
    """("margin", {"drift": "0.02"}) from "margin:drift=0.02"."""
    name, *pairs = spec.split(":")
    return name, dict(pair.partition("=")[::2] for pair in pairs)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("history")
    p.add_argument("models", nargs="+", help="model names, model:key=value:… for parameters")
    p.add_argument("--warmup", type=int, default=0, help="matches learned from, not scored")
    args = p.parse_args()
    history = read_history(args.history)
    matches = history.matches
    labels = np.array(season_labels(matches))
    loss: dict[str, dict[str, float]] = {}
    brier: dict[str, dict[str, float]] = {}
    for spec in args.models:
        name, pairs = parse_model(spec)
        first = matches[0]
        info = HistoryInfo(
            history.max_team_size, history.header, max(len(first.team_a), len(first.team_b))
        )
        options = parse_options(MODELS[name], pairs)
        result = replay(create_replay(name, options, info), matches, warmup=args.warmup)
        pred, out, scored = result.predictions, result.outcomes, result.scored
        loss[spec], brier[spec] = {}, {}
        for label in [*dict.fromkeys(labels[scored]), "pooled"]:
            chosen = scored if label == "pooled" else scored & (labels == label)
            decided = chosen & (out != 0.5)
            right = np.where(out[decided] == 1, pred[decided], 1 - pred[decided])
            loss[spec][label] = float(-np.log(np.clip(right, 1e-15, 1)).mean())
            brier[spec][label] = float(((pred[chosen] - out[chosen]) ** 2).mean())
        print(f"replayed {spec}", flush=True)
    for title, table in (("log loss", loss), ("Brier", brier)):
        print(f"\n{title}:\n")
        print("| season | matches | " + " | ".join(args.models) + " |")
        print("| --- | ---: |" + " ---: |" * len(args.models))
        for label in next(iter(table.values())):
            chosen = result.scored if label == "pooled" else result.scored & (labels == label)
            best = min(table[m][label] for m in args.models)
            cells = [
                f"**{table[m][label]:.4f}**"
                if table[m][label] == best
                else f"{table[m][label]:.4f}"
                for m in args.models
            ]
            print(f"| {label} | {int(chosen.sum()):,} | " + " | ".join(cells) + " |")
    first, seasons = args.models[0], [k for k in loss[args.models[0]] if k != "pooled"]
    for other in args.models[1:]:
        wins = sum(loss[first][s] < loss[other][s] for s in seasons)
        print(f"\n{first} has the lower log loss than {other} in {wins} of {len(seasons)} seasons")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
