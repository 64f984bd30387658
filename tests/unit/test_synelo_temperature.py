"""F1t: the temperature T of the P a SynElo pool shows and is scored by, σ(x/T) for F1's
(F1u's) logit x, while F2's update keeps σ(x).

Expected values are written out with the arithmetic that gives them; the code under test
never computes one.
"""

from __future__ import annotations

import math
import random

import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import Match
from synelo.models.base import RoundFacts
from synelo.models.synelo import SynElo
from synelo.ratings import (
    PlayerRecord,
    Rater,
    RecordBook,
    SynEloParams,
    apply_change,
    new_window,
    rate_round,
    roster_probability,
)
from synelo.ratings.params import ParameterError

REL = 1e-12


def sigma(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_f1t_divides_the_logit_of_even_and_uneven_rosters() -> None:
    # even: x = (3300 − 3000)/600 = 0.5; T = 2 → σ(0.25)
    assert roster_probability(3300, 3, 3000, 3, 600.0, True, 2.0) == pytest.approx(
        sigma(0.25), rel=REL
    )
    # F1u, 3 v 2: x = (3·3000/3 − 3·2000/2)/600 + ln(3/2) = 0 + 0.405465…; T = 0.5 → σ(2x)
    assert roster_probability(3000, 3, 2000, 2, 600.0, True, 0.5) == pytest.approx(
        sigma(2 * math.log(1.5)), rel=REL
    )
    # T = 1 is F1 itself, to the bit
    assert roster_probability(3300, 3, 3000, 3, 600.0, True, 1.0) == roster_probability(
        3300, 3, 3000, 3, 600.0
    )


def _records(n: int, params: SynEloParams) -> dict[str, PlayerRecord]:
    return {f"p{i}": PlayerRecord(900 + 37 * i, 60, new_window(params)) for i in range(n)}


def test_rate_round_shows_the_tempered_p_and_moves_ratings_by_f1s() -> None:
    """A round at T = 3 has P_A = σ(x/3); every change is the one T = 1 makes (its `p` is
    σ(x)), so T changes no rating."""
    cool = SynEloParams(theta=600.0, convergence="revised", temperature=3.0)
    plain = cool.with_changes(temperature=1.0)
    outcomes = []
    for params in (plain, cool):
        recs = _records(6, params)
        participants = [(p, "A" if i < 3 else "B", r) for i, (p, r) in enumerate(recs.items())]
        ratings = [r.rating for r in recs.values()]
        outcomes.append(rate_round(ratings[:3], ratings[3:], participants, "A", params))
    at_one, at_three = outcomes
    x = (sum(900 + 37 * i for i in range(3)) - sum(900 + 37 * i for i in range(3, 6))) / 600.0
    assert at_one.p_a == pytest.approx(sigma(x), rel=REL)
    assert at_three.p_a == pytest.approx(sigma(x / 3.0), rel=REL)
    assert at_three.changes == at_one.changes
    assert at_three.changes[0].p == pytest.approx(sigma(x), rel=REL)


def test_the_replay_scores_the_tempered_p_with_the_same_ratings() -> None:
    """`Rater.play` (the replay's loop) returns σ(x/T); the books of T = 1 and T = 2.5 end
    equal over 300 random rounds, so T calibrates without touching the learning."""
    rng = random.Random(7)
    players = [f"q{i}" for i in range(20)]
    rounds = []
    for _ in range(300):
        rng.shuffle(players)
        rounds.append((tuple(players[:4]), tuple(players[4:8]), rng.choice(("A", "B"))))
    books, shown = [], []
    for t in (1.0, 2.5):
        params = SynEloParams(theta=400.0, convergence="revised", temperature=t)
        rater, book = Rater(params), RecordBook(params)
        ps = [rater.play(book, a, b, w) for a, b, w in rounds]  # type: ignore[arg-type]
        books.append({p: (r.rating, r.rounds_played) for p, r in book.records.items()})
        shown.append(ps)
    assert books[0] == books[1]
    logits = [math.log(p / (1 - p)) for p in shown[0]]
    assert shown[1] == pytest.approx([sigma(x / 2.5) for x in logits], rel=1e-9)
    assert any(abs(x) > 0.05 for x in logits)  # the check above is not on coin flips only


def test_the_model_and_the_history_replay_predict_with_t() -> None:
    facts = RoundFacts(("a", "b"), ("c", "d"), "A")
    model = SynElo({"theta": 200.0, "temperature": 4.0})
    states = {"a": PlayerRecord(1100, 5, new_window(model.synelo))}
    # x = (1100 + 1000 − 2000)/200 = 0.5 → σ(0.125)
    assert model.predict(states, facts) == pytest.approx(sigma(0.125), rel=REL)
    replay = create_replay(
        "synelo", {"theta": 200.0, "temperature": 4.0}, HistoryInfo(2, {"team_size": 2})
    )
    match = Match("m1", ("a", "b"), ("c", "d"), "A")
    assert replay.predict(match) == pytest.approx(0.5, rel=REL)  # nobody rated yet
    replay.update(match)
    rated = replay.ratings()
    x = (rated["a"] + rated["b"] - rated["c"] - rated["d"]) / 200.0
    assert replay.predict(match) == pytest.approx(sigma(x / 4.0), rel=REL)


def test_a_pool_stored_before_f1t_loads_at_t_one_and_bounds_hold() -> None:
    stored = SynEloParams().to_dict()
    del stored["temperature"]
    assert SynEloParams.from_dict(stored).temperature == 1.0
    assert SynEloParams(theta=600.0, temperature=2.0).prediction_scale() == 1200.0
    for bad in (0.01, 21.0, float("nan"), float("inf")):
        with pytest.raises(ParameterError) as caught:
            SynEloParams(temperature=bad).within_bounds()
        assert caught.value.names == ("temperature",)
    with pytest.raises(ParameterError):
        SynEloParams(temperature=0.0)


def test_apply_change_moves_the_record_by_the_learning_p() -> None:
    """The window keeps F2's P (σ(x)), which F3's z-evidence reads, not the shown one."""
    params = SynEloParams(theta=600.0, convergence="revised", temperature=5.0)
    recs = _records(2, params)
    participants = [("p0", "A", recs["p0"]), ("p1", "B", recs["p1"])]
    outcome = rate_round([900], [937], participants, "B", params)
    apply_change(recs["p0"], outcome.changes[0])
    assert recs["p0"].window.probs[-1] == pytest.approx(sigma(-37 / 600.0), abs=1e-12)
