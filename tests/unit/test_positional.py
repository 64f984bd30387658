"""The positional model (seed 003, P1–P6): the seed's 2v2 formulas with its erratum
corrected, the n-position weighting, score-based results and the result distribution."""

from __future__ import annotations

import math
import random

import pytest

from synelo.models import ParameterError, RoundError, RoundFacts, create_model
from synelo.models.positional import Positional, PositionalSkill, parse_facing
from synelo.ratings.positional import (
    Seat,
    expected_score,
    result_distribution,
    result_goals,
    result_index,
    result_score,
    spread,
    win_probability,
)

FOOSBALL = {"offense": "defense", "defense": "offense"}


def seed_e(opp_matchup: float, opp_mate: float, own: float, mate: float) -> float:
    """The seed's E_{d,a}, written out as it prints it:
    1/(1 + 10^(((0.75·R_opp + 0.25·R_oppmate) − (0.75·R + 0.25·R_mate))/400))."""
    return 1 / (
        1 + 10 ** (((0.75 * opp_matchup + 0.25 * opp_mate) - (0.75 * own + 0.25 * mate)) / 400)
    )


def foosball_round(winner: str = "A", scores: tuple[int, int] | None = (10, 4)) -> RoundFacts:
    extras: dict[str, object] = {
        "positions": {"ao": "offense", "ad": "defense", "bo": "offense", "bd": "defense"}
    }
    if scores is not None:
        extras["scores"] = {"A": scores[0], "B": scores[1]}
    return RoundFacts(("ao", "ad"), ("bo", "bd"), winner, extras=extras)  # type: ignore[arg-type]


def skills(model: Positional, **ratings: tuple[str, float]) -> dict[str, PositionalSkill]:
    return {
        player: PositionalSkill(model.r0, {where: r}, {where: 5})
        for player, (where, r) in ratings.items()
    }


def test_the_worked_example_with_the_erratum_corrected() -> None:
    """A: offense 1700, defense 1500; B: offense 1600, defense 1550; A wins 10:4.

    S_A = 1 − 4/19. A's defender faces B's offense, A's offense faces B's defender. Every
    player moves by 20·(S − E) from their own old rating; the seed's text writes B's new
    ratings from R_{d,a} (1500), which would move B's offense to 1500 − 20·(S − E_{d,a})."""
    model = Positional()
    states = skills(
        model,
        ao=("offense", 1700),
        ad=("defense", 1500),
        bo=("offense", 1600),
        bd=("defense", 1550),
    )
    s_a = 1 - 4 / 19
    e_da = seed_e(1600, 1550, 1500, 1700)  # B's offense against A's defender
    e_oa = seed_e(1550, 1600, 1700, 1500)  # B's defender against A's offense
    assert e_da == pytest.approx(0.446242, abs=1e-6)
    assert e_oa == pytest.approx(0.623326, abs=1e-6)
    rated = model.rate(states, foosball_round())
    after = {p: model.fields(s) for p, s in rated.states.items()}
    assert after["ad"]["defense.rating"] == pytest.approx(1500 + 20 * (s_a - e_da), abs=1e-9)
    assert after["ao"]["offense.rating"] == pytest.approx(1700 + 20 * (s_a - e_oa), abs=1e-9)
    assert after["bo"]["offense.rating"] == pytest.approx(1600 - 20 * (s_a - e_da), abs=1e-9)
    assert after["bd"]["defense.rating"] == pytest.approx(1550 - 20 * (s_a - e_oa), abs=1e-9)
    # the figures, to a reader's pencil: +6.86, +3.31, −6.86, −3.31
    assert after["ad"]["defense.rating"] == pytest.approx(1506.865, abs=1e-3)
    assert after["bo"]["offense.rating"] == pytest.approx(1593.135, abs=1e-3)
    seed_literal = 1500 - 20 * (s_a - e_da)  # the seed's R_{o,b} from R_{d,a}
    assert abs(after["bo"]["offense.rating"] - seed_literal) > 90
    # zero-sum in 2v2: what A gains, B loses
    total_before = 1700 + 1500 + 1600 + 1550
    total_after = sum(
        next(v for k, v in f.items() if k.endswith(".rating")) for f in after.values()
    )
    assert total_after == pytest.approx(total_before, abs=1e-9)


def test_p1_is_the_seeds_formula_for_any_2v2() -> None:
    rng = random.Random(3)
    for _ in range(200):
        ao, ad, bo, bd = (rng.uniform(800, 2400) for _ in range(4))
        side_a = [Seat("offense", ao), Seat("defense", ad)]
        side_b = [Seat("offense", bo), Seat("defense", bd)]
        e_da = expected_score(1, side_a, side_b, FOOSBALL, 0.75, 400)
        e_oa = expected_score(0, side_a, side_b, FOOSBALL, 0.75, 400)
        assert e_da == pytest.approx(seed_e(bo, bd, ad, ao), rel=1e-12)
        assert e_oa == pytest.approx(seed_e(bd, bo, ao, ad), rel=1e-12)
        # B's players see the mirror: E_{o,b} = 1 − E_{d,a}
        assert expected_score(0, side_b, side_a, FOOSBALL, 0.75, 400) == pytest.approx(1 - e_da)


def test_the_n_position_weighting() -> None:
    """Three classes a side, each facing its own class: x = w·R + (1 − w)·mean(mates),
    y = w·R(opponent of the class) + (1 − w)·mean(other opponents)."""
    side_a = [Seat("scout", 1700), Seat("soldier", 1500), Seat("medic", 1600)]
    side_b = [Seat("medic", 1400), Seat("scout", 1650), Seat("soldier", 1550)]
    w = 0.6
    x = w * 1500 + (1 - w) * (1700 + 1600) / 2
    y = w * 1550 + (1 - w) * (1400 + 1650) / 2
    assert expected_score(1, side_a, side_b, {}, w, 400) == pytest.approx(
        1 / (1 + 10 ** ((y - x) / 400)), rel=1e-12
    )
    # two soldiers on B: the matchup is their mean
    side_b2 = [Seat("soldier", 1400), Seat("soldier", 1800), Seat("medic", 1500)]
    y2 = w * 1600 + (1 - w) * 1500
    assert expected_score(1, side_a, side_b2, {}, w, 400) == pytest.approx(
        1 / (1 + 10 ** ((y2 - x) / 400)), rel=1e-12
    )
    # no opponent in the class faced: every opponent is the matchup
    y3 = (1400 + 1800 + 1500) / 3
    assert expected_score(0, side_a, side_b2, {}, w, 400) == pytest.approx(
        1 / (1 + 10 ** ((y3 - (w * 1700 + (1 - w) * 1550)) / 400)), rel=1e-12
    )
    # 1v1: own rating against the opponent's
    assert expected_score(0, [Seat("a", 1600)], [Seat("a", 1400)], {}, w, 400) == pytest.approx(
        1 / (1 + 10 ** (-200 / 400))
    )


def test_p3_scores_on_an_even_spread() -> None:
    assert result_score("A", 10, 0, 10) == 1.0
    assert result_score("B", 0, 10, 10) == 0.0
    assert result_score("A", 10, 9, 10) == pytest.approx(10 / 19)
    assert result_score("B", 9, 10, 10) == pytest.approx(9 / 19)
    assert result_score("A", 5, 2, 5) == pytest.approx(1 - 2 / 9)  # a game to 5: 9 steps
    assert result_score("A", 12, 10, 10) == pytest.approx(10 / 19)  # past the target: 10:9
    assert result_score("A", None, None, 10) == 1.0
    assert result_score("B", None, None, 10) == 0.0
    assert result_score("draw", 3, 3, 10) == 0.5
    for index in range(20):
        a, b = result_goals(index, 10)
        assert result_index("A" if a > b else "B", a, b, 10) == index


def test_p5_distribution_and_p_a() -> None:
    for expected, sd in ((0.5, 0.25), (0.7, 0.2), (0.1, 0.4), (0.95, 0.05)):
        probs = result_distribution(expected, sd, 10)
        assert len(probs) == 20 and all(p >= 0 for p in probs)
        assert sum(probs) == pytest.approx(1.0, abs=1e-12)
        assert sum(probs[10:]) == pytest.approx(win_probability(expected, sd), abs=1e-12)
        phi = 0.5 * math.erfc(-(expected - 0.5) / sd / math.sqrt(2))
        assert win_probability(expected, sd) == pytest.approx(phi, rel=1e-12)
        # the mirror: A's distribution reversed is B's
        mirrored = result_distribution(1 - expected, sd, 10)
        assert mirrored == pytest.approx(probs[::-1], abs=1e-12)
    # the most likely result is the one nearest E_A
    probs = result_distribution(14 / 19, 0.05, 10)
    assert max(range(20), key=probs.__getitem__) == 14
    assert result_goals(14, 10) == (10, 5)
    assert result_goals(0, 10) == (0, 10) and result_goals(19, 10) == (10, 0)


def test_p6_the_spread_is_learnt_from_the_pool() -> None:
    model = Positional({"spread_prior": 0.3, "spread_rounds": 10})
    assert model.spread_of({}) == pytest.approx(0.3)
    states: dict[str, PositionalSkill] = {}
    context: dict[str, object] = {}
    squares = 0.0
    for i in range(30):
        facts = foosball_round("A" if i % 3 else "B", (10, i % 10) if i % 3 else (i % 10, 10))
        expected = model.expected(states, facts)
        rated = model.rate(states, facts, context)  # type: ignore[arg-type]
        assert rated.p_a == pytest.approx(win_probability(expected, model.spread_of(context)))  # type: ignore[arg-type]
        squares += (model.score(facts) - expected) ** 2
        states.update(rated.states)
        context.update(rated.context)
    assert context["spread"] == {"rounds": 30, "squares": pytest.approx(squares)}
    assert model.spread_of(context) == pytest.approx(math.sqrt((10 * 0.09 + squares) / 40))  # type: ignore[arg-type]
    assert spread(0.3, 10, 0, 0.0) == pytest.approx(0.3)


def test_rounds_without_positions_or_with_contrary_scores_are_refused() -> None:
    model = Positional()
    with pytest.raises(RoundError) as caught:
        model.rate({}, RoundFacts(("a",), ("b",), "A"))
    assert caught.value.field == ("positions",)
    bad = RoundFacts(("a",), ("b",), "A", extras={"positions": {"a": "offense"}})
    with pytest.raises(RoundError, match="player b has no position"):
        model.check_round(bad)
    model.check_round(bad, rated=False)  # a prediction may leave positions out
    goalie = RoundFacts(("a",), ("b",), "A", extras={"positions": {"a": "goalie", "b": "offense"}})
    with pytest.raises(RoundError) as caught:
        model.check_round(goalie, rated=False)
    assert caught.value.field == ("positions", "a")
    with pytest.raises(RoundError) as caught:
        model.check_round(foosball_round("A", (3, 10)))
    assert caught.value.field == ("scores",)
    with pytest.raises(RoundError):
        model.check_round(foosball_round("draw", (3, 4)))
    Positional({"positions": ""}).check_round(goalie)  # any position when none are listed


def test_parameters_facing_and_positions() -> None:
    assert parse_facing("offense:defense, a:b") == {
        "offense": "defense",
        "defense": "offense",
        "a": "b",
        "b": "a",
    }
    for wrong in ("offense", "a:a", "a:b,a:c", ":b"):
        with pytest.raises(ValueError):
            parse_facing(wrong)
    with pytest.raises(ParameterError) as caught:
        create_model("positional", {"facing": "offense:goalie"})
    assert caught.value.name == "facing"
    create_model("positional", {"positions": "", "facing": "offense:goalie"})


def test_display_rating_admin_set_and_predictions_without_positions() -> None:
    model = Positional()
    state = PositionalSkill(1600, {"offense": 1700, "defense": 1500}, {"offense": 3, "defense": 1})
    assert model.rating(state) == pytest.approx((3 * 1700 + 1500) / 4)
    moved = model.with_rating(state, 1800)
    assert model.rating(moved) == pytest.approx(1800)
    assert moved.ratings["offense"] - moved.ratings["defense"] == pytest.approx(200)
    assert moved.base == pytest.approx(1600 + 1800 - 1650)
    # a prediction without positions plays everyone at their display rating
    facts = RoundFacts(("s",), ("n",), "A")
    expected = model.expected({"s": state}, facts)
    assert expected == pytest.approx(1 / (1 + 10 ** ((1600 - 1650) / 400)))
    assert model.decode(model.encode(state)) == state
    assert model.decode({}) == model.new_state()


def test_one_player_per_position_when_the_pool_asks() -> None:
    doubled = RoundFacts(
        ("a", "b"),
        ("c", "d"),
        "A",
        extras={"positions": {"a": "offense", "b": "offense", "c": "offense", "d": "defense"}},
    )
    Positional().check_round(doubled)  # by default a team may field two at one position
    with pytest.raises(RoundError) as caught:
        Positional({"one_per_position": "yes"}).check_round(doubled)
    assert caught.value.field == ("positions", "b")
    Positional({"one_per_position": "yes"}).check_round(foosball_round())
