"""A replay scored against a simulated world's truth: settling worked out by hand, an oracle
model that scores perfectly, a model that guesses that scores nothing, traits, and replays
without a truth left as they were."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from synelo.evaluation.adapters import RatingModel, create_replay
from synelo.evaluation.history import Match, parse_match
from synelo.evaluation.replay import replay
from synelo.evaluation.truth import (
    Truth,
    _quantile,
    load_truth,
    parse_truth,
    score_truth,
    settled_at,
)
from synelo.sim.history import HistoryWorldConfig, generate

CONFIG = HistoryWorldConfig(players=40, matches=1500, team_size=4, maps=2, seed=3)


@pytest.fixture(scope="module")
def world() -> tuple[list[Match], Truth]:
    lines, truth = generate(CONFIG)
    return [parse_match(line) for line in lines[1:]], parse_truth(truth)


class Known(RatingModel):
    """A toy model that knows each player's figure from the start (`values`), learns
    nothing, and answers through the default `strength_of` (its `ratings`)."""

    name = "known"
    summary = "fixed strengths"

    def __init__(self, values: dict[str, float], traits: dict[str, dict[str, float]]) -> None:
        self.values, self.known, self.learned = values, set[str](), traits

    def predict(self, match: Match) -> float:
        return 0.5

    def update(self, match: Match) -> None:
        sides = match.participants or (match.team_a, match.team_b)
        self.known.update(sides[0], sides[1])

    def ratings(self) -> dict[str, float]:
        return {p: self.values[p] for p in self.known}

    def traits(self) -> dict[str, dict[str, float]]:
        return self.learned

    def parameters(self) -> dict[str, Any]:
        return {}


def test_settled_at_by_hand() -> None:
    # target 0, near 1, stay 2, hold 2: index 2 (0.5) is near, then 1.5 and −1.9 stay.
    assert settled_at([5.0, 3.0, 0.5, 1.5, -1.9, 9.0], 0.0, 1.0, 2.0, hold=2) == 3
    # index 1 is near but 2.5 strays next: index 3 is the first that holds.
    assert settled_at([5.0, 0.0, 2.5, 0.9, 0.0, 1.9, 7.0], 0.0, 1.0, 2.0, hold=2) == 4
    # near only where fewer than `hold` matches follow: cannot tell
    assert settled_at([5.0, 5.0, 5.0, 0.0, 0.0], 0.0, 1.0, 2.0, hold=2) is None
    assert settled_at([math.nan, 0.0, math.nan, 0.0], 0.0, 1.0, 2.0, hold=1) is None


def test_quantiles_with_players_who_never_settle() -> None:
    assert _quantile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert _quantile([1.0, 2.0, 3.0, math.inf], 0.5) == 2.5
    assert _quantile([1.0, 2.0, math.inf, math.inf], 0.5) is None  # lands on a never
    assert _quantile([], 0.5) is None


def test_an_oracle_scores_perfectly(world: tuple[list[Match], Truth]) -> None:
    matches, truth = world
    oracle = Known(dict(truth.skill), {"offset": truth.traits["offset"], "spin": {"p0001": 1}})
    result = replay(oracle, matches, truth=truth)
    assert result.truth is not None
    scores = result.truth
    assert scores.spearman_skill == pytest.approx(1.0) and scores.skill_players == 40
    assert set(scores.traits) == {"offset"}  # the truth has no "spin"
    assert scores.traits["offset"].spearman == pytest.approx(1.0)
    settling = scores.rounds_to_within
    assert settling.beta == pytest.approx(1.0) and settling.alpha == pytest.approx(0.0, abs=1e-9)
    # every late arrival who played 100 matches is at their level from their first match
    late = [p for p, a in truth.arrival.items() if a > 0]
    assert 0 < settling.players <= len(late) and settling.never == 0
    assert settling.median == settling.p75 == 1.0
    assert set(settling.by_tercile.values()) <= {1.0, None}
    assert result.to_json()["truth"]["spearman_skill"] == pytest.approx(1.0)


def test_a_model_that_guesses_finds_nothing(world: tuple[list[Match], Truth]) -> None:
    matches, truth = world
    lines, big_truth = generate(HistoryWorldConfig(players=300, matches=600, team_size=8))
    big = [parse_match(line) for line in lines[1:]]
    rng = random.Random(5)
    guess = Known({p: rng.gauss(0, 1) for p in big_truth["players"]}, {})
    scores = replay(guess, big, truth=parse_truth(big_truth)).truth
    assert scores is not None and scores.spearman_skill is not None
    assert abs(scores.spearman_skill) < 0.15 and scores.skill_players > 250
    assert scores.traits == {}


def test_command_is_scored_over_players_who_commanded_five_times(
    world: tuple[list[Match], Truth],
) -> None:
    matches, truth = world
    commands: dict[str, int] = {}
    for m in matches:
        for p in (m.details or {})["commanders"].values():
            commands[p] = commands.get(p, 0) + 1
    learned = {p: -v for p, v in truth.traits["command"].items()}  # backwards on purpose
    model = Known(dict(truth.skill), {"command": learned})
    scores = score_truth(model, matches, {}, truth)
    assert scores.skill_players == 0 and scores.spearman_skill is None
    assert scores.rounds_to_within.median is None and scores.rounds_to_within.players == 0
    assert scores.traits["command"].players == sum(n >= 5 for n in commands.values())
    assert scores.traits["command"].spearman == pytest.approx(-1.0)


def test_served_models_answer_strength_of_cheaply() -> None:
    model = create_replay("elo")
    model.step(Match("1", ("a",), ("b",), "A"))
    assert model.strength_of("a") == model.ratings()["a"] == 1016.0
    assert model.strength_of("nobody") is None
    assert model.traits() == {}


def test_a_replay_without_truth_is_unchanged(world: tuple[list[Match], Truth]) -> None:
    matches, truth = world
    plain = replay(create_replay("elo"), matches)
    scored = replay(create_replay("elo"), matches, truth=truth)
    assert plain.truth is None and "truth" not in plain.to_json()
    assert (plain.predictions == scored.predictions).all()
    assert scored.truth is not None and scored.truth.spearman_skill is not None
    assert scored.truth.spearman_skill > 0.3  # elo finds something in 1,500 rounds of 4v4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nope", "not JSON"),
        ('{"players": {}}', '"players"'),
        ('{"players": {"p1": {"offset": 1}}}', "needs a numeric skill"),
        ('{"players": {"p1": {"skill": 1, "offset": "x"}}}', "players.p1.offset"),
    ],
)
def test_bad_truth_files(tmp_path: Any, text: str, message: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_truth(path)
