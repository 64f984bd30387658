"""The Hive model (seed 001): H1–H10, both errata, and the seed's six claims under
"Properties of the Basic Model", each as a test that would fail if the model broke it."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from synelo.models import RoundFacts, create_model
from synelo.models.hive import Hive
from synelo.ratings.hive import (
    HiveContext,
    HiveParams,
    HiveSkill,
    adagrad_rate,
    bucket_rate,
    context_bias,
    learn_context,
    median_length,
    remember_length,
    sigmoid,
    time_weight,
)
from synelo.ratings.hive_solve import GRADIENT_TOLERANCE, SolveReport, solve_skills


def hive(**params: Any) -> Hive:
    model = create_model("hive", params)
    assert isinstance(model, Hive)
    return model


def facts(a: list[str], b: list[str], winner: str = "A", **extras: Any) -> RoundFacts:
    return RoundFacts(tuple(a), tuple(b), winner, extras=extras)  # type: ignore[arg-type]


def skills(model: Hive, **values: float) -> dict[str, HiveSkill]:
    return {p: HiveSkill(v) for p, v in values.items()}


# --- H1, H10: time ---------------------------------------------------------------------------


def test_the_first_half_of_a_typical_round_weighs_as_much_as_the_rest() -> None:
    r = 600.0
    first = time_weight(0, r / 2, r)
    rest = time_weight(r / 2, math.inf, r)
    assert first == pytest.approx(rest) == pytest.approx(0.5)
    # and playing the second half of a long round counts for little
    assert time_weight(r, 2 * r, r) == pytest.approx(0.25 - 0.0625)


def test_the_median_length_follows_the_recent_rounds() -> None:
    ctx = HiveContext()
    assert median_length(ctx, 600.0) == 600.0  # nothing reported yet
    for length in (100, 300, 200):
        remember_length(ctx, length)
    assert median_length(ctx, 600.0) == 200.0
    for _ in range(100):
        remember_length(ctx, 900)
    assert median_length(ctx, 600.0) == 900.0 and len(ctx.lengths) == 63


def test_a_fraction_is_from_the_start_and_a_span_is_exact() -> None:
    model = hive()
    ctx = HiveContext(lengths=[600.0])
    rnd = facts(
        ["a", "x"],
        ["b"],
        duration=600.0,
        time_played={"a": 0.5, "x": {"from": 300.0, "to": 600.0}},
    )
    played = {p.player: p.t for p in model.played_round(rnd, ctx).presences}
    assert played["a"] == pytest.approx(time_weight(0, 300, 600))
    assert played["x"] == pytest.approx(time_weight(300, 600, 600))
    assert played["b"] == pytest.approx(time_weight(0, 600, 600))


# --- H2: prediction --------------------------------------------------------------------------


def test_the_offset_follows_the_side_not_the_letter() -> None:
    model = hive(reference_side="marines")
    states = {"m": HiveSkill(5.0, o=1.0), "n": HiveSkill(5.0)}
    as_marine = model.predict(states, facts(["m"], ["n"], sides={"A": "marines", "B": "aliens"}))
    as_alien = model.predict(states, facts(["m"], ["n"], sides={"A": "aliens", "B": "marines"}))
    no_sides = model.predict(states, facts(["m"], ["n"]))
    assert as_marine == pytest.approx(sigmoid(0.5))  # (5 + 1 − 5) / 2
    assert as_alien == pytest.approx(sigmoid(-0.5))
    assert no_sides == pytest.approx(0.5)


def test_the_first_side_the_pool_sees_is_the_reference() -> None:
    model = hive()
    sides = {"A": "aliens", "B": "marines"}
    rated = model.rate({}, facts(["x"], ["y"], sides=sides))
    assert rated.context["reference"] == "aliens"
    # given as a parameter, it is never learned
    assert (
        "reference"
        not in hive(reference_side="marines").rate({}, facts(["x"], ["y"], sides=sides)).context
    )


def test_commanders_add_their_own_term() -> None:
    model = hive()
    states = {"ca": HiveSkill(5.0, chi=2.0), "cb": HiveSkill(5.0, chi=0.0)}
    for p in "abcd":
        states[p] = HiveSkill(5.0)
    rnd = facts(["ca", "a", "b"], ["cb", "c", "d"], commanders={"A": "ca", "B": "cb"})
    # the skill term is even; the commanding term is (2 − 0)/2
    assert model.predict(states, rnd) == pytest.approx(sigmoid(1.0))


# --- H3–H6: update and errata -----------------------------------------------------------------


def test_adagrad_sums_squared_gradients_erratum() -> None:
    """The seed's g ← g + ∇s goes negative after losses and the root of g + ε fails; the
    squares never do."""
    model = hive()
    states: dict[str, HiveSkill] = {}
    for _ in range(30):  # a player who keeps losing: every gradient is negative
        rated = model.rate(states, facts(["loser"], ["winner"], "B"))
        states.update(rated.states)
    assert states["loser"].g > 0.0
    assert math.isfinite(adagrad_rate(model.hive, states["loser"].g))
    # g is exactly the sum of the squared steps' gradients, and each step is α·∇ with α
    # from g after the round's square is added (the seed's order)
    g, s = 0.0, model.hive.s0
    for _ in range(3):
        grad = -(0.0 - sigmoid((s - 5.0) / 2)) * -1 / 2  # T = +1, G = 0, t/Σt = ½
        g += grad * grad
        s += adagrad_rate(model.hive, g) * grad
    replay: dict[str, HiveSkill] = {"w": HiveSkill(5.0)}
    for _ in range(3):
        rated = model.rate(replay, facts(["l"], ["w"], "B"))
        replay["l"] = rated.states["l"]
    assert replay["l"].g == pytest.approx(g) and replay["l"].s == pytest.approx(s)
    seed_g = 0.0
    for _ in range(30):
        seed_g += -0.25  # the seed's sum of signed gradients
    with pytest.raises(ValueError):
        math.sqrt(seed_g + model.hive.eps)


def test_the_offset_accumulates_erratum() -> None:
    """o ← o + c·∇o: two wins on the reference side move the offset twice as far as one
    (the seed's o ← c·∇o would keep only the last)."""
    model = hive(reference_side="marines", a=0.0)
    sides = {"A": "marines", "B": "aliens"}
    states: dict[str, HiveSkill] = {}
    steps = []
    for _ in range(2):
        rated = model.rate(states, facts(["m"], ["n"], sides=sides))
        states.update(rated.states)
        steps.append(states["m"].o)
    assert steps[0] > 0 and steps[1] > steps[0] * 1.5
    # winning on marines and losing on aliens push the same way
    lose_as_alien = model.rate({}, facts(["m"], ["n"], "B", sides={"A": "aliens", "B": "marines"}))
    assert lose_as_alien.states["m"].o > 0


def test_a_commander_moves_chi_and_not_s() -> None:
    model = hive()
    rnd = facts(["ca", "a"], ["cb", "b"], commanders={"A": "ca", "B": "cb"})
    rated = model.rate({}, rnd)
    ca = rated.states["ca"]
    assert ca.chi > 0 and ca.s == model.hive.s0 and ca.commanded == 1 and ca.rounds == 0
    assert rated.states["a"].s > model.hive.s0 and rated.states["a"].chi == 0


# --- the seed's six properties -------------------------------------------------------------


def test_claim_1_an_expected_stomp_changes_nothing() -> None:
    model = hive()
    states = skills(model, **{"s1": 60.0, "s2": 60.0, "w1": 0.1, "w2": 0.1})
    rated = model.rate(states, facts(["s1", "s2"], ["w1", "w2"], "A"))
    assert rated.p_a > 0.9999
    for p in states:
        assert rated.states[p].s == pytest.approx(states[p].s, abs=1e-6)


def test_claim_2_only_the_result_and_time_count_not_points() -> None:
    model = hive()
    base = facts(["a", "b"], ["c", "d"], "A")
    scored = facts(["a", "b"], ["c", "d"], "A", player_scores={"a": 90.0, "b": 1.0})
    one, two = model.rate({}, base), model.rate({}, scored)
    assert {p: s.s for p, s in one.states.items()} == {p: s.s for p, s in two.states.items()}


def test_claim_3_a_late_joiner_to_a_lost_game_loses_little() -> None:
    model = hive()
    team_a, team_b = ["a1", "a2", "a3"], ["b1", "b2", "b3"]
    joined_late = RoundFacts(
        tuple(team_a),
        tuple(team_b),
        "B",
        (*team_a, "late"),
        tuple(team_b),
        {"duration": 600.0, "time_played": {"late": {"from": 500.0, "to": 600.0}}},
    )
    rated = model.rate({}, joined_late)
    s0 = model.hive.s0
    late_loss = s0 - rated.states["late"].s
    full_loss = s0 - rated.states["a1"].s
    assert 0 < late_loss < 0.1 * full_loss


def test_claim_4_more_players_win_and_time_normalises_over_both_teams() -> None:
    model = hive()
    assert model.predict({}, facts(["a", "b", "c"], ["d", "e"])) > 0.5
    # everyone new at s₀ = kθ: logit = s₀·(3 − 2)/5
    assert model.predict({}, facts(["a", "b", "c"], ["d", "e"])) == pytest.approx(
        sigmoid(model.hive.s0 / 5)
    )


def test_claim_5_larger_games_move_ratings_less() -> None:
    model = hive()
    small = model.rate({}, facts(["a"], ["b"], "A")).states["a"].s
    big_a = [f"a{i}" for i in range(12)]
    big = model.rate({}, facts(big_a, [f"b{i}" for i in range(12)], "A")).states["a0"].s
    assert small - model.hive.s0 > 5 * (big - model.hive.s0) > 0


def test_claim_6_a_strong_player_gains_most_by_carrying_the_underdog() -> None:
    model = hive()
    states = skills(model, star=8.0, **{f"p{i}": 5.0 for i in range(5)}, weak=1.0)
    # the star joins the weak side (underdog) and wins, or joins the strong side and wins
    underdog = model.rate(states, facts(["star", "weak", "p0"], ["p1", "p2", "p3"], "A"))
    favourite = model.rate(states, facts(["star", "p0", "p1"], ["weak", "p2", "p3"], "A"))
    assert underdog.p_a < 0.5 < favourite.p_a
    gain_under = underdog.states["star"].s - 8.0
    gain_fav = favourite.states["star"].s - 8.0
    assert gain_under > 2 * gain_fav > 0


# --- H7: the context bias ----------------------------------------------------------------


def test_a_three_round_bucket_does_not_read_as_certain() -> None:
    ctx = HiveContext()
    keys = ("aliens|marines", "aliens|marines|ns2_veil", "aliens|marines|ns2_veil|3")
    for i in range(1000):  # the sides are even on the other maps
        learn_context(ctx, ("aliens|marines", "aliens|marines|ns2_tram"), float(i % 2), 1e9)
    for _ in range(3):
        learn_context(ctx, keys, 1.0, 1e9)
    # (3 + 30·q)/(3 + 30) at each of the two fine levels, from an all but even side pair
    q_pair = (503 + 30 * 0.5) / (1003 + 30)
    q_map = (3 + 30 * q_pair) / 33
    assert (
        bucket_rate(ctx, keys[:2], 30.0) == pytest.approx(q_map) == pytest.approx(0.546, abs=1e-3)
    )
    assert bucket_rate(ctx, keys, 30.0) == pytest.approx((3 + 30 * q_map) / 33)
    assert bucket_rate(ctx, keys, 30.0) == pytest.approx(0.588, abs=1e-3)
    # a pool's very first three rounds, all one side's, every level that young
    young = HiveContext()
    for _ in range(3):
        learn_context(young, keys, 1.0, 1e9)
    assert bucket_rate(young, keys, 30.0) == pytest.approx(0.624, abs=0.001)
    # a large bucket reads close to its own rate
    big = HiveContext()
    for i in range(5000):
        learn_context(big, keys, float(i % 10 < 7), 1e9)
    assert bucket_rate(big, keys, 30.0) == pytest.approx(0.7, abs=0.01)


def test_a_bucket_follows_a_rate_that_changes() -> None:
    ctx = HiveContext()
    keys = ("x|y",)
    for _ in range(3000):
        learn_context(ctx, keys, 1.0, 200.0)
    for _ in range(1000):
        learn_context(ctx, keys, 0.0, 200.0)
    assert bucket_rate(ctx, keys, 30.0) < 0.1  # five half-lives on: the old rate is gone


def test_the_bias_is_the_same_whichever_team_plays_the_side() -> None:
    ctx = HiveContext()
    keys = ("aliens|marines",)
    for i in range(400):
        learn_context(ctx, keys, float(i % 4 != 0), 1e9)  # aliens win 75 %
    assert context_bias(ctx, keys, True, 30.0) == pytest.approx(
        -context_bias(ctx, keys, False, 30.0)
    )
    model = hive()
    states: dict[str, HiveSkill] = {}
    context: dict[str, Any] = {}
    for i in range(300):  # aliens always win, whichever letter they have
        sides = {"A": "aliens", "B": "marines"} if i % 2 else {"A": "marines", "B": "aliens"}
        rnd = facts(["x"], ["y"], "A" if i % 2 else "B", sides=sides, map="ns2_tram")
        rated = model.rate(
            states, rnd, {k: context[k] for k in model.context_keys(rnd) if k in context}
        )
        context.update(rated.context)
    rnd = facts(["u"], ["v"], sides={"A": "aliens", "B": "marines"}, map="ns2_tram")
    entries = {k: context[k] for k in model.context_keys(rnd) if k in context}
    assert model.predict({}, rnd, entries) > 0.85


# --- H8: the full-history solve ---------------------------------------------------------


def test_the_solve_converges_and_recovers_the_order() -> None:
    rng = random.Random(3)
    true = {f"p{i}": rng.uniform(1.0, 9.0) for i in range(40)}
    model = hive()
    rounds = []
    for _ in range(3000):
        picked = rng.sample(sorted(true), 8)
        a, b = picked[:4], picked[4:]
        logit = (sum(true[p] for p in a) - sum(true[p] for p in b)) / 8
        winner = "A" if rng.random() < sigmoid(logit) else "B"
        rounds.append(model.played_round(facts(a, b, winner), HiveContext()))
    report: list[SolveReport] = []
    solved = solve_skills(rounds, {}, model.hive, report)
    assert report[0].converged and report[0].gradient <= GRADIENT_TOLERANCE
    assert all(s.s > 0 for s in solved.values())
    from synelo.evaluation.stats import spearman

    rho = spearman([solved[p].s for p in true], list(true.values()))
    assert rho is not None and rho > 0.9


def test_the_solve_is_the_maximum_of_its_stated_posterior() -> None:
    """At the solution every gradient of the stated log posterior is zero: for s, the
    seed's Σ T·(G − p)·t/Σt + (k − 1)/(s − θ) − 1/θ on the solve's scale; for o and χ the
    same sums with σ and c, minus o/w² and χ/w²."""
    model = hive(k=3.0, theta=2.0, solve_prior_sd=0.7, reference_side="m")
    rng = random.Random(1)
    players = [f"p{i}" for i in range(6)]
    played = []
    for _ in range(300):
        picked = rng.sample(players, 4)
        sides = {"A": "m", "B": "z"} if rng.random() < 0.5 else {"A": "z", "B": "m"}
        rnd = facts(
            picked[:2], picked[2:], rng.choice("AB"), sides=sides,
            commanders={"A": picked[0], "B": picked[2]},
            time_played={picked[1]: 0.5}, duration=600.0,
        )  # fmt: skip
        played.append(model.played_round(rnd, HiveContext(lengths=[600.0])))
    report: list[SolveReport] = []
    solved = solve_skills(played, {}, model.hive, report)
    assert report[0].converged
    w2 = 0.7**2
    for player in players:
        state = solved[player]
        u = state.s - model.hive.theta  # the solve's scale
        grads = [(model.hive.k - 1) / u - 1 / model.hive.theta, -state.o / w2, -state.chi / w2]
        for rnd in played:
            play_w = sum(pr.t for pr in rnd.presences)
            command_w = sum(pr.c for pr in rnd.presences)
            z = rnd.bias
            z += (
                sum(
                    pr.sign
                    * pr.t
                    * (solved[pr.player].s - model.hive.theta + pr.side * solved[pr.player].o)
                    for pr in rnd.presences
                )
                / play_w
            )  # noqa: E501
            z += sum(pr.sign * pr.c * solved[pr.player].chi for pr in rnd.presences) / command_w
            error = rnd.g - sigmoid(z)
            for pr in rnd.presences:
                if pr.player == player:
                    grads[0] += pr.sign * error * pr.t / play_w
                    grads[1] += pr.sign * pr.side * error * pr.t / play_w
                    grads[2] += pr.sign * error * pr.c / command_w
        assert max(abs(g) for g in grads) < 1e-4, (player, grads)
    assert any(abs(solved[p].o) > 0.01 for p in players)
    assert any(abs(solved[p].chi) > 0.01 for p in players)


def test_a_refit_runs_only_when_the_pool_asks_and_keeps_unrated_players_new() -> None:
    """A roster player who was not a participant was never rated: the solve leaves them
    out (a re-rate has no state for them), as it does every player when `solve` is off."""
    rnd = RoundFacts(("a", "x"), ("b",), "A", ("a",), ("b",))
    model = hive(solve="on")
    states = dict(model.rate({}, rnd).states)
    assert set(states) == {"a", "b"}
    assert hive().refit(states, [rnd], {}) is None
    refitted = model.refit(states, [rnd], {})
    assert refitted is not None and set(refitted.states) == {"a", "b"}
    assert refitted.states["a"].s > refitted.states["b"].s


def test_a_player_the_rounds_say_nothing_about_keeps_a_newcomers_level() -> None:
    """The solve's prior puts such a player at its mode (k − 1)θ; handed back on the online
    scale (+θ) they are at kθ, where a new player starts."""
    model = hive(solve="on")
    rng = random.Random(4)
    players = [f"p{i}" for i in range(10)]
    rounds = [facts(*_split(rng.sample(players, 4)), rng.choice("AB")) for _ in range(300)]
    rounds.append(facts(["idle"], ["p0"], "draw", time_played={"idle": 0.0, "p0": 0.0}))
    states: dict[str, HiveSkill] = {}
    for rnd in rounds:
        states.update(model.rate(states, rnd).states)
    refitted = model.refit(states, rounds, {})
    assert refitted is not None
    solved = refitted.states
    assert solved["idle"].s == pytest.approx(model.hive.s0, rel=1e-4)
    mean = sum(solved[p].s for p in players) / len(players)
    assert abs(mean - model.hive.s0) < 0.5 * model.hive.theta


def _split(four: list[str]) -> tuple[list[str], list[str]]:
    return four[:2], four[2:]


# --- H9 and storage ---------------------------------------------------------------------


def test_the_display_is_a_scaled_positive_skill() -> None:
    model = hive()
    assert model.rating(model.new_state()) == pytest.approx(200.0 * 4.0 * 1.25)
    assert model.rating(HiveSkill(-3.0)) == 1.0  # positive, as NS2 shows it
    again = model.with_rating(HiveSkill(5.0, o=0.3, chi=1.0), 1500)
    assert again.s == pytest.approx(7.5) and again.o == 0.3 and again.chi == 1.0
    assert model.decode(model.encode(again)) == again
    fields = model.fields(again)
    assert set(fields) == {"s", "o", "chi", "rounds", "commanded"}


def test_hive_params_default_to_the_model_defaults() -> None:
    model = hive()
    assert model.hive == HiveParams()


def test_a_commander_who_left_the_chair_is_rated_as_a_player_for_the_rest() -> None:
    """H1 for a commander: χ for the span commanded, s for the rest of their time."""
    model = hive()
    rnd = facts(
        ["ca", "a"],
        ["cb", "b"],
        duration=600.0,
        commanders={"A": {"player": "ca", "from": 0.0, "to": 200.0}, "B": "cb"},
    )
    played = {p.player: p for p in model.played_round(rnd, HiveContext()).presences}
    assert played["ca"].c == pytest.approx(time_weight(0, 200, 600))
    assert played["ca"].t == pytest.approx(time_weight(200, 600, 600))
    assert played["cb"].t == 0.0 and played["cb"].c == pytest.approx(time_weight(0, 600, 600))
    rated = model.rate({}, rnd)
    assert rated.states["ca"].s > model.hive.s0 and rated.states["ca"].chi > 0
    assert rated.states["ca"].rounds == 1 and rated.states["ca"].commanded == 1
