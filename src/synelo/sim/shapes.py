"""The history-shapes check: every general model against plain Elo on simulated histories of
every shape (issue 39; docs/evaluation.md, "History shapes").

A shape is a team size (1v1 to 12v12) and which of the `simulate-history` ns2 world's
features it has: times, side offsets with commanders, scores and uneven rounds. The design
is one at a time: for each size, the ns2 world as it is (a 1v1 without commanders, which
it cannot seat) and that world with one feature changed, then everything the base has
turned off and the rest on. Every model replays each history at its defaults, as
`synelo replay` does, after `warmup` matches it learns from without scoring, and the rule
is that no general model's log loss is more than `TOLERANCE` above Elo's.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.advise import general_models
from synelo.evaluation.history import read_history
from synelo.evaluation.replay import replay
from synelo.sim.history import HistoryWorldConfig, generate, save_world

# the general models (`synelo models` but the peers and those needing special fields): those
# the registry marks `general`, as `synelo advise` takes them
GENERAL = tuple(general_models())
BASELINE = "elo"
TOLERANCE = 0.03  # at most 3 % above Elo's log loss
SIZES = (1, 2, 3, 6, 12)
VARIANTS = ("base", "no times", "no sides", "scores", "uneven", "bare")


@dataclass(frozen=True, slots=True)
class ShapeResult:
    """One history's figures: its size and variant, the matches scored, each model's log
    loss (decided matches)."""

    size: int
    variant: str
    scored: int
    loss: dict[str, float]

    def ratio(self, model: str) -> float:
        """The model's log loss over Elo's."""
        return self.loss[model] / self.loss[BASELINE]

    def met(self, models: Sequence[str] = GENERAL) -> bool:
        """Every general model within TOLERANCE of Elo."""
        return all(self.ratio(m) <= 1 + TOLERANCE for m in models if m in self.loss)


def world(size: int, variant: str, matches: int, players: int, seed: int) -> HistoryWorldConfig:
    """The ns2 world of one shape (see the module): the base has times, side offsets and map
    biases, commanders (not in a 1v1), no scores and even teams; a variant changes one of
    these, `bare` all of them (no times, no sides nor commanders, scores, uneven)."""
    base = HistoryWorldConfig(
        players=players, matches=matches, team_size=size, seed=seed, commanders=size > 1
    )
    changes: dict[str, dict[str, object]] = {
        "base": {},
        "no times": {"times": False},
        "no sides": {"sides": False, "commanders": False},
        "scores": {"scores": True},
        "uneven": {"uneven_share": 0.3},
        "bare": {
            "times": False,
            "sides": False,
            "commanders": False,
            "scores": True,
            "uneven_share": 0.3,
        },
    }
    return replace(base, **changes[variant])  # type: ignore[arg-type]


def log_loss(predictions: np.ndarray, outcomes: np.ndarray, scored: np.ndarray) -> float:
    """Mean −log P(the winner) over the scored matches with a winner."""
    decided = scored & (outcomes != 0.5)
    right = np.where(outcomes[decided] == 1, predictions[decided], 1 - predictions[decided])
    return float(-np.log(np.clip(right, 1e-15, 1)).mean())


def check_shape(
    config: HistoryWorldConfig, models: Sequence[str], warmup: int, variant: str = ""
) -> ShapeResult:
    """Write the world's history, replay every model on it at its defaults and score them."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.jsonl"
        save_world(*generate(config), path, Path(tmp) / "truth.json")
        history = read_history(path, strict=True)
    matches = history.matches
    first = matches[0]
    info = HistoryInfo(
        history.max_team_size, history.header, max(len(first.team_a), len(first.team_b))
    )
    loss: dict[str, float] = {}
    scored = 0
    for name in models:
        result = replay(create_replay(name, {}, info), matches, warmup=warmup)
        loss[name] = log_loss(result.predictions, result.outcomes, result.scored)
        scored = int(result.scored.sum())
    return ShapeResult(config.team_size, variant, scored, loss)


def check_shapes(
    sizes: Sequence[int] = SIZES,
    variants: Sequence[str] = VARIANTS,
    models: Sequence[str] = (BASELINE, *GENERAL),
    *,
    matches: int = 4000,
    players: int = 200,
    warmup: int = 1000,
    seed: int = 1,
) -> Iterator[ShapeResult]:
    """Each shape's figures in turn (sizes, then variants)."""
    for size in sizes:
        for variant in variants:
            config = world(size, variant, matches, players, seed)
            yield check_shape(config, models, warmup, variant)
