"""`whr` under replay (`synelo.evaluation.adapters.whr`): its text options, the full-history
refit every N matches without any prediction seeing its own match or a later one, and the
epad that even teams never read."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from synelo.evaluation.adapters import create_replay, parse_options
from synelo.evaluation.adapters.whr import WhrReplay
from synelo.evaluation.history import Match, Winner
from synelo.evaluation.replay import predict_all
from synelo.models import MODELS
from synelo.models.whr import EPAD
from synelo.ratings.whr import to_elo

START = datetime(2026, 3, 1, tzinfo=UTC)


def history(
    n: int, seed: int = 5, sizes: tuple[tuple[int, int], ...] = ((2, 3), (3, 3))
) -> list[Match]:
    """`n` matches of 24 players with hidden skills, four a day, of the given team sizes (the
    larger side at random): winners drawn from the skills, so ratings have something to find."""
    rng = random.Random(seed)
    skill = {f"p{i}": rng.gauss(0.0, 1.0) for i in range(24)}
    out = []
    for i in range(n):
        size_a, size_b = rng.choice(sizes)
        if rng.random() < 0.5:
            size_a, size_b = size_b, size_a
        drawn = rng.sample(sorted(skill), size_a + size_b)
        team_a, team_b = tuple(drawn[:size_a]), tuple(drawn[size_a:])
        lead = sum(skill[p] for p in team_a) / size_a - sum(skill[p] for p in team_b) / size_b
        lead += 0.8 * (size_a - size_b)  # the larger team is ahead
        winner: Winner = "A" if rng.random() < 1 / (1 + np.exp(-lead)) else "B"
        out.append(Match(f"m{i}", team_a, team_b, winner, time=START + timedelta(hours=6 * i)))
    return out


def predictions(matches: list[Match], **options: float | str) -> np.ndarray:
    model = create_replay("whr", options)
    p, _ = predict_all(model, matches)
    return np.frombuffer(p, dtype=float)


def flipped(match: Match) -> Match:
    return replace(match, winner="B" if match.winner == "A" else "A")


def test_text_options_name_a_choice_and_are_checked() -> None:
    assert parse_options(MODELS["whr"], {"epad": "none", "refit_every": "50"}) == {
        "epad": "none",
        "refit_every": 50,
    }
    assert create_replay("whr", {"epad": "bpst"}).parameters()["epad"] == "bpst"
    with pytest.raises(ValueError, match="not one of simple, bpst, none"):
        parse_options(MODELS["whr"], {"epad": "lots"})
    with pytest.raises(ValueError, match="refit_every must be >= 0"):
        create_replay("whr", {"refit_every": -1})
    # numbers stay numbers for every other model
    with pytest.raises(ValueError, match="not a number"):
        parse_options(MODELS["elo"], {"k": "none"})


def test_a_refit_never_sees_the_match_it_predicts_or_a_later_one() -> None:
    """With a refit every 15 matches, the prediction of match i is the same whether the
    history stops at i, goes on with other matches, or match i itself ends the other way;
    and the refits do change the predictions that follow them (the test is not vacuous)."""
    matches = history(120)
    every = 15
    full = predictions(matches, refit_every=every)
    online = predictions(matches)
    # up to the first refit (after match `every`) both replays are one; after it they part
    assert np.array_equal(full[:every], online[:every])
    assert full[every] != online[every]
    assert np.max(np.abs(full[every:] - online[every:])) > 0.01
    for i in (every, 64, 119):
        cut = predictions(matches[: i + 1], refit_every=every)
        assert np.array_equal(cut, full[: i + 1]), i
        # match i ending the other way, and everything after it changed too
        other = matches[:i] + [flipped(m) for m in matches[i:]]
        assert np.array_equal(predictions(other, refit_every=every)[: i + 1], full[: i + 1]), i
    model = create_replay("whr", {"refit_every": every})
    assert isinstance(model, WhrReplay)
    predict_all(model, matches)
    assert model.refits == len(matches) // every
    # the refit replaced the epads as well: each uneven step the history has is fitted
    assert model.context[EPAD + "2"]["mean"] > 0.1


def test_epad_changes_nothing_when_every_match_is_even() -> None:
    even = history(80, sizes=((2, 2), (3, 3)))
    base = predictions(even, epad="none")
    for kind in ("simple", "bpst"):
        assert np.array_equal(predictions(even, epad=kind), base)
        assert np.array_equal(
            predictions(even, epad=kind, refit_every=25),
            predictions(even, epad="none", refit_every=25),
        )
    uneven = history(80)
    assert not np.array_equal(predictions(uneven, epad="simple"), predictions(uneven, epad="none"))


def test_the_display_ratings_are_the_last_days_elo() -> None:
    model = create_replay("whr", {})
    assert isinstance(model, WhrReplay)
    predict_all(model, history(60))
    shown = model.display_ratings()
    assert shown.keys() == model.states.keys() and len(shown) == 24
    for player, state in model.states.items():
        assert shown[player] == to_elo(state.rating)
    assert len(set(shown.values())) == 24 and any(abs(r - 1500.0) > 50 for r in shown.values())
