"""The `margin` model against hand-worked values (docs/maths/margin.md, M1–M10)."""

from __future__ import annotations

import math

import pytest

from synelo.models import create_model
from synelo.models.base import RoundFacts
from synelo.models.margin import NEWCOMERS, SPREAD, Margin
from synelo.ratings.margin import Skill, Spread

# a mode whose side scores so far have mean 10 and sd 2 (100 scores: Σ = 1000, Σx² = 10400)
WARM = {"weight": 100.0, "total": 1000.0, "squares": 10_400.0}


def one_v_one(winner: str = "A", **extras: object) -> RoundFacts:
    return RoundFacts(("a",), ("b",), winner, extras=extras)  # type: ignore[arg-type]


def test_scores_move_the_players_by_the_margin_first() -> None:
    """β 0.9, γ 0.45, two new players (μ 0, v0 = 0.6² = 0.36). A 14–8 in a mode of mean 10
    and sd 2: y_A = 2, y_B = −1 (M1), a margin d = 3. The mode has learned no noise nor
    slope yet: σ_d² = 2β² = 1.62 (M9) and the total's weight is 0 (M10), so one step (M3):
    S = 1.62 + 1.45²·(0.36 + 0.36) = 3.1338, g = 1.45·3/S = 1.388091;
    μ_A = 0.36·g = 0.499713 = −μ_B, v = 0.36 − 1.45²·0.36²/S = 0.273050."""
    facts = one_v_one(mode="ctf", scores={"A": 14, "B": 8})
    rated = Margin().rate({}, facts, {SPREAD + "ctf": WARM})
    assert rated.p_a == 0.5
    a, b = rated.states["a"], rated.states["b"]
    assert (a.mu, a.v) == pytest.approx((0.499713, 0.273050), abs=1e-6)
    assert (b.mu, b.v) == pytest.approx((-0.499713, 0.273050), abs=1e-6)
    # M1: the mode's spread learned both scores, in its own context entry
    spread = rated.context[SPREAD + "ctf"]
    keep = 1 - 1 / 1000
    assert spread["weight"] == pytest.approx((100 * keep + 1) * keep + 1)
    assert spread["total"] == pytest.approx((1000 * keep + 14) * keep + 8)
    # M9 and M10 learned from the round, before its update: e_d² = 9 against V = 1.5138
    assert spread["noise_weight"] == 1
    assert spread["margin_noise"] == pytest.approx(9 - 1.5138)
    assert spread["margin_xx"] == 0 and spread["total_xy"] == 0  # the skills were all 0


def test_the_winner_alone_is_a_probit_step() -> None:
    """No scores (M4): c² = 2·0.81 + 1.45²·(0.36 + 0.36) = 3.1338, t = 0, λ = φ(0)/Φ(0) =
    0.797885, w = λ² = 0.636620; μ_A = 1.45·0.36/√c²·λ = 0.235275 = −μ_B and
    v = 0.36·(1 − 1.45²·0.36/c²·w) = 0.304646."""
    rated = Margin().rate({}, one_v_one())
    a, b = rated.states["a"], rated.states["b"]
    assert a.mu == pytest.approx(0.235275, abs=1e-6) and b.mu == pytest.approx(-0.235275, abs=1e-6)
    assert a.v == pytest.approx(0.304646, abs=1e-6) and b.v == a.v
    assert rated.context == {}


def test_the_win_probability_is_m2() -> None:
    """M2: Φ(1.45·(0.5 − 0.1)/√(2·0.81 + 1.45²·(0.04 + 0.09))) = Φ(0.58/√1.893325)."""
    states = {"a": Skill(0.5, 0.04, 0.36), "b": Skill(0.1, 0.09, 0.36)}
    p = Margin().predict(states, one_v_one())
    assert p == pytest.approx(0.5 * math.erfc(-(0.58 / math.sqrt(1.893325)) / math.sqrt(2)))
    assert 0.5 < p < 1


def test_one_blow_out_moves_a_rating_a_bounded_amount() -> None:
    """A 1000–0 is clipped to ±3 spreads (M1): the same step as any score 3 sd out."""
    model, context = Margin(), {SPREAD: WARM}
    huge = model.rate(
        {}, RoundFacts(("a",), ("b",), "A", extras={"scores": {"A": 1000, "B": 0}}), context
    )
    edge = model.rate(
        {}, RoundFacts(("a",), ("b",), "A", extras={"scores": {"A": 16, "B": 4}}), context
    )
    assert huge.states["a"].mu == pytest.approx(edge.states["a"].mu)
    unbounded = create_model("margin", {"clip": 100}).rate(
        {},
        huge_round := RoundFacts(("a",), ("b",), "A", extras={"scores": {"A": 1000, "B": 0}}),
        context,
    )
    assert unbounded.states["a"].mu > 10 * huge.states["a"].mu
    assert huge_round.winner == "A"


def test_each_mode_learns_its_own_spread() -> None:
    """A 3–2 in CTF and a 150–60 elsewhere: separate entries, neither needs a setting."""
    model = Margin()
    context: dict[str, dict[str, float]] = {}
    for i in range(40):
        for mode, scores in (("ctf", (3, 2 + i % 2)), ("frc", (150 + i, 60))):
            facts = RoundFacts(
                ("a",),
                ("b",),
                "A" if scores[0] > scores[1] else "draw",
                extras={"mode": mode, "scores": {"A": scores[0], "B": scores[1]}},
            )
            key = SPREAD + mode
            rated = model.rate(
                {}, facts, {k: v for k, v in context.items() if k in model.context_keys(facts)}
            )
            context.update(rated.context)
            assert key in rated.context
    ctf, frc = (Spread(**context[SPREAD + m]) for m in ("ctf", "frc"))
    assert ctf.mean == pytest.approx(2.75, abs=0.05) and frc.mean == pytest.approx(114.75, abs=0.5)
    assert frc.sd > 10 * ctf.sd


def test_scores_that_contradict_the_winner_count_as_the_winner_alone() -> None:
    model = Margin()
    contradicted = model.rate({}, one_v_one("B", scores={"A": 5, "B": 2}), {SPREAD: WARM})
    winner_only = model.rate({}, one_v_one("B"))
    assert contradicted.states["a"].mu == winner_only.states["a"].mu
    assert contradicted.context == {}


def test_margins_off_is_the_same_model_on_the_winner_alone() -> None:
    off = create_model("margin", {"margins": "off"})
    with_scores = off.rate({}, one_v_one(scores={"A": 14, "B": 8}), {SPREAD: WARM})
    assert with_scores.states["a"].mu == Margin().rate({}, one_v_one()).states["a"].mu


def test_a_mode_counts_scores_only_after_its_warm_up() -> None:
    cold = {"weight": 5.0, "total": 50.0, "squares": 520.0}
    rated = Margin().rate({}, one_v_one(scores={"A": 14, "B": 8}), {SPREAD: cold})
    assert rated.states["a"].mu == Margin().rate({}, one_v_one()).states["a"].mu


def test_newcomers_start_where_players_stood_after_their_first_rounds() -> None:
    """M8: a player reaching `newcomer_rounds` adds μ·k to the newcomers' mean; a new player
    then starts at that mean / k once enough have."""
    model = create_model("margin", {"newcomer_rounds": 1})
    rated = model.rate({}, RoundFacts(("a", "c"), ("b", "d"), "A"))
    entry = rated.context[NEWCOMERS]
    keep = 1 - 1 / 1000  # four players, the older ones kept 1 − 1/memory as much
    assert entry["weight"] == pytest.approx(((keep + 1) * keep + 1) * keep + 1)
    assert abs(entry["total"]) < 1e-3  # two up, two down by as much
    learned = {NEWCOMERS: {"weight": 10.0, "total": -4.0}}  # −0.4 a side
    states = {"a": Skill(0.0, 0.1, 0.1)}
    new_against_a = RoundFacts(("x",), ("a",), "A")
    assert model.predict(states, new_against_a) == 0.5  # nothing learned: a new player is even
    # learned: x, new, starts at −0.4/1 against a player of 0.0 (M2 with v0 = 0.36)
    expected = 0.5 * math.erfc(1.45 * 0.4 / math.sqrt(1.62 + 1.45**2 * 0.46) / math.sqrt(2))
    assert model.predict(states, new_against_a, learned) == pytest.approx(expected)


def test_a_season_pulls_means_and_grows_uncertainty_back() -> None:
    """M6 with fraction ½: μ 0.4 and −0.2 (mean 0.1) become 0.25 and −0.05; v grows the share
    ½·(2 − ½) = ¾ of the way back, 0.1 of prior 0.3 to 0.25. M7: each mode's spread keeps
    40 scores' weight."""
    states = {"a": Skill(0.4, 0.1, 0.3, 12), "b": Skill(-0.2, 0.3, 0.3, 5)}
    out = Margin().season(states, 0.5, {SPREAD + "ctf": WARM, NEWCOMERS: {"weight": 3, "total": 1}})
    assert (out.states["a"].mu, out.states["a"].v) == pytest.approx((0.25, 0.25))
    assert (out.states["b"].mu, out.states["b"].v) == pytest.approx((-0.05, 0.3))
    assert out.states["a"].rounds == 12 and states["a"].mu == 0.4  # the given states unchanged
    spread = out.context[SPREAD + "ctf"]
    assert spread["weight"] == 40 and spread["total"] / spread["weight"] == pytest.approx(10)
    assert NEWCOMERS not in out.context


def test_the_state_round_trips_and_an_admin_sets_the_display_rating() -> None:
    model = Margin()
    state = Skill(0.123, 0.05, 0.36, 7)
    assert model.decode(model.encode(state)) == state
    assert model.decode({}) == model.new_state()
    assert model.rating(model.with_rating(state, 1700)) == pytest.approx(1700)
    assert model.fields(state)["uncertainty"] == pytest.approx(1000 * math.sqrt(0.05))


def test_a_mode_learns_its_own_score_noise() -> None:
    """M9: once 100 rounds have taught it, the margin's noise is the mean of e_d² − V, here
    50/100 = 0.5 in place of 2β² = 1.62: the same 14–8 moves A further (S = 0.5 + 1.5138,
    μ_A = 0.36·1.45·3/S = 0.777634), and M2 predicts with it too."""
    taught = {**WARM, "noise_weight": 100.0, "margin_noise": 50.0, "total_noise": 80.0}
    facts = one_v_one(scores={"A": 14, "B": 8})
    learned = Margin().rate({}, facts, {SPREAD: taught})
    assert learned.states["a"].mu == pytest.approx(0.777634, abs=1e-6)
    assert Spread(**taught).noises(0.9, 100) == pytest.approx((0.5, 0.8))
    states = {"a": Skill(0.2, 0.1, 0.36), "b": Skill(0.0, 0.1, 0.36)}
    sharp = Margin().predict(states, facts, {SPREAD: taught})
    assert sharp == pytest.approx(
        0.5 * math.erfc(-(1.45 * 0.2 / math.sqrt(0.5 + 1.45**2 * 0.2)) / math.sqrt(2))
    )
    assert sharp > Margin().predict(states, facts, {SPREAD: WARM})


def test_the_total_counts_as_far_as_it_follows_the_skills() -> None:
    """M10: the total's weight is (1 + γ)·b_u/b_d, the ratio of the slopes of the total and
    the margin on the skills before each round, within [0, 1]: a game whose totals follow
    the skills (FRC) learns from them, a zero-sum one (the totals always equal) does not."""
    follows = {
        **WARM,
        "noise_weight": 100.0,
        "margin_xx": 10.0,
        "margin_xy": 20.0,
        "total_xx": 10.0,
        "total_xy": 5.0,
    }  # b_d = 2, b_u = 0.5
    assert Spread(**follows).total_weight(1.45, 100) == pytest.approx(1.45 * 0.25)
    zero_sum = {**follows, "total_xy": 0.0}
    assert Spread(**zero_sum).total_weight(1.45, 100) == 0.0
    assert Spread(**follows).total_weight(1.45, 101) == 0.0  # not ready: the margin alone
    # a 14–8 from two sides strong together: the total raises both, the margin splits them
    states = {"a": Skill(0.1, 0.1, 0.36), "b": Skill(0.1, 0.1, 0.36)}
    facts = one_v_one(scores={"A": 14, "B": 8})
    with_total = Margin().rate(dict(states), facts, {SPREAD: follows})
    fresh = {"a": Skill(0.1, 0.1, 0.36), "b": Skill(0.1, 0.1, 0.36)}
    margin_only = Margin().rate(fresh, facts, {SPREAD: zero_sum})
    assert with_total.states["b"].mu > margin_only.states["b"].mu
    assert with_total.states["a"].mu > margin_only.states["a"].mu


def test_one_huge_score_cannot_wreck_a_modes_scale() -> None:
    """M1: once warm, the spread learns a score bounded to mean ± 3 sd, as the round read it:
    a 1,000,000–0 moves the mean and sd no more than a 16–0 would (mean 10, sd 2: 16 is the
    bound). A score whose square overflows is left out."""
    model = Margin()
    huge = model.rate({}, one_v_one(scores={"A": 1_000_000, "B": 0}), {SPREAD: WARM})
    edge = model.rate({}, one_v_one(scores={"A": 16, "B": 0}), {SPREAD: WARM})
    assert huge.context[SPREAD]["total"] == pytest.approx(edge.context[SPREAD]["total"])
    assert huge.context[SPREAD]["squares"] == pytest.approx(edge.context[SPREAD]["squares"])
    spread = Spread(**WARM)
    spread.learn(1e200, 0.999, 3.0, 20)
    assert spread.weight == WARM["weight"] and math.isfinite(spread.sd)


def test_drift_grows_a_variance_up_to_its_prior() -> None:
    """M5: before a round, v grows by τ²/k: 0.02²/1 = 0.0004 for a 1v1, never past v0."""
    a, b = Skill(0.0, 0.1, 0.36), Skill(0.0, 0.3598, 0.36)
    rated = Margin().rate({"a": a, "b": b}, one_v_one(), {})
    # the probit step then shrinks them: check the drift through its inputs
    c2 = 1.62 + 1.45**2 * (0.1004 + 0.36)  # b's 0.3598 + 0.0004 capped at 0.36
    lam = math.sqrt(2 / math.pi)  # φ(0)/Φ(0) at t = 0: the means are equal
    assert rated.states["a"].mu == pytest.approx(1.45 * 0.1004 / math.sqrt(c2) * lam)
    assert rated.states["b"].mu == pytest.approx(-1.45 * 0.36 / math.sqrt(c2) * lam)


def test_a_draw_without_scores_is_a_margin_of_zero() -> None:
    """M4's draw: a margin of 0 seen with the margin's noise, M3's form: with μ_A = 0.2,
    μ_B = 0 (v 0.1 each, 1v1), S = 1.62 + 1.45²·0.2008 = 2.042182 (after M5's 0.0004
    each), g = 1.45·(0 − 1.45·0.2)/S; μ_A = 0.2 + 0.1004·g."""
    states = {"a": Skill(0.2, 0.1, 0.36), "b": Skill(0.0, 0.1, 0.36)}
    rated = Margin().rate(states, one_v_one("draw"), {})
    s = 1.62 + 1.45**2 * 0.2008
    g = 1.45 * (0 - 1.45 * 0.2) / s
    assert rated.states["a"].mu == pytest.approx(0.2 + 0.1004 * g)
    assert rated.states["b"].mu == pytest.approx(0.0 - 0.1004 * g)
    assert rated.states["a"].v == pytest.approx(0.1004 - 1.45**2 * 0.1004**2 / s)


def test_the_total_step_by_hand() -> None:
    """M3's second step: a mode whose total weight w_u = 1.45·(5/10)/(20/10) = 0.3625 and
    whose noises are learned (σ_d² 0.5, σ_u² 0.8); two new players (v 0.36), a 14–8: d = 3,
    u = 1. Margin step: S = 0.5 + 1.45²·0.72 = 2.0138, g = 1.45·3/S, μ_A = 0.36·g = −μ_B,
    v = 0.36 − 1.45²·0.36²/S. Total step: the prediction 0.3625·(μ_A + μ_B) = 0,
    S' = 0.8 + 0.3625²·2v, g' = 0.3625·(1 − 0)/S', each μ += v·g'."""
    taught = {
        **WARM,
        "noise_weight": 100.0,
        "margin_noise": 50.0,
        "total_noise": 80.0,
        "margin_xx": 10.0,
        "margin_xy": 20.0,
        "total_xx": 10.0,
        "total_xy": 5.0,
    }
    rated = Margin().rate({}, one_v_one(scores={"A": 14, "B": 8}), {SPREAD: taught})
    s = 0.5 + 1.45**2 * 0.72
    g = 1.45 * 3 / s
    mu, v = 0.36 * g, 0.36 - 1.45**2 * 0.36**2 / s
    w = 0.3625
    s2 = 0.8 + w * w * 2 * v
    g2 = w * 1 / s2
    assert rated.states["a"].mu == pytest.approx(mu + v * g2)
    assert rated.states["b"].mu == pytest.approx(-mu + v * g2)
    assert rated.states["a"].v == pytest.approx(v - w * w * v * v / s2)
