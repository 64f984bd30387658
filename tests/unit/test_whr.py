"""WHR's formulas (W1–W11 of docs/maths/whr.md) against worked values, dense linear algebra
and brute-force optimisation."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import scipy.optimize

from synelo.models import ParameterError, RoundFacts
from synelo.models.rounds import UNDATED
from synelo.models.whr import CLOCK, EPAD, VirtualClock, Whr, round_day, virtual_days
from synelo.ratings.whr import (
    NATURAL,
    Anchor,
    Day,
    Drift,
    PlayerDays,
    Stack,
    drift_variances,
    epad_design,
    epad_terms,
    fold_days,
    last_day_variance,
    newton_step,
    rating_highness,
    smooth_max,
    solve_tridiagonal,
    to_elo,
    to_natural,
)
from synelo.ratings.whr_fit import FitGame, fit


def test_the_natural_scale_is_elo_over_400_ln10_around_1500() -> None:
    assert pytest.approx(173.7177927613) == NATURAL
    assert to_elo(0.0) == 1500.0 and to_elo(1.0) == pytest.approx(1673.7177927613)
    assert to_natural(to_elo(-0.37)) == pytest.approx(-0.37)
    # 400 Elo apart is 10:1 odds, as Elo's base-10 logistic says
    assert 1 / (1 + math.exp(-to_natural(1900.0))) == pytest.approx(10 / 11)


@pytest.mark.parametrize(
    ("w", "gap", "sigma"),
    [(0.1, 1, 21.2), (1.0, 1, 30.0), (30.0, 1, 124.1), (0.3, 10, 64.4), (10.0, 100, 212.1)],
)
def test_zero_k_drift_gives_the_seeds_table(w: float, gap: int, sigma: float) -> None:
    """W4 for a player with W = 100 (the seed's table of σ in Elo)."""
    variance = Drift().variance(gap, w, 100.0)
    assert math.sqrt(variance) * NATURAL == pytest.approx(sigma, abs=0.05)
    assert Drift("constant", w2=300.0).variance(gap, w, 100.0) == pytest.approx(
        gap * 300.0 / NATURAL**2
    )


def test_epad_sums_the_steps_between_sizes_and_scales_past_the_last() -> None:
    """W2: 3v5 = epad(3v4) + epad(4v5); B larger is the negative; past step K the footnote's
    K/(smaller size)."""
    assert epad_terms(3, 3, 15) == []
    assert epad_terms(4, 3, 15) == [(3, 1.0)]
    assert epad_terms(3, 5, 15) == [(3, -1.0), (4, -1.0)]
    assert epad_terms(17, 16, 15) == [(15, pytest.approx(15 / 16))]
    assert epad_terms(14, 17, 15) == [(14, 1.0 * -1), (15, pytest.approx(-(15 / 15 + 15 / 16)))]
    assert epad_terms(0, 2, 15) == []


def test_bpst_splits_each_step_by_the_smaller_teams_best_player() -> None:
    """W7: rh(b) = σ((b − 2000)/200) with b a smooth maximum of the smaller team's Elos;
    the multipliers of low and high add up to the step's."""
    assert rating_highness(2000.0) == 0.5
    assert rating_highness(2400.0) == pytest.approx(1 / (1 + math.exp(-2)))
    elos = [1800.0, 2100.0, 2090.0]
    assert max(elos) <= smooth_max(elos) <= max(elos) + 50 * math.log(3)
    design = epad_design("bpst", 15, [to_natural(1500)] * 3, [to_natural(e) for e in elos[:2]])
    assert design["2:high"] + design["2:low"] == pytest.approx(1.0)
    assert design["2:high"] > 0.5  # the 2-player team's best is ~2100
    assert epad_design("none", 15, [0.0] * 3, [0.0] * 2) == {}
    assert epad_design("simple", 15, [0.0] * 2, [0.0] * 3) == {"2": -1.0}


def test_the_tridiagonal_solve_matches_dense_algebra() -> None:
    rng = random.Random(2)
    n = 7
    off = [rng.uniform(0.5, 2.0) for _ in range(n - 1)]
    diag = [-(rng.uniform(0.1, 1.0) + 2.5) for _ in range(n)]
    rhs = [rng.gauss(0, 1) for _ in range(n)]
    dense = np.diag(diag) + np.diag(off, 1) + np.diag(off, -1)
    solved = solve_tridiagonal(np.asarray(diag), np.asarray(off), np.asarray(rhs))
    assert solved.tolist() == pytest.approx(list(np.linalg.solve(dense, rhs)))


def _player(rng: random.Random, days: int = 6, anchor: Anchor | None = None) -> PlayerDays:
    built = []
    for d in range(days):
        games = [
            (1.0 / rng.randint(1, 4), rng.gauss(0, 0.5), float(rng.random() < 0.6))
            for _ in range(rng.randint(1, 5))
        ]
        built.append(Day(3 * d + rng.randint(0, 2), 0.0, games))
    return PlayerDays.of(built, anchor)


def _neg_posterior(r: np.ndarray, player: PlayerDays, drift: Drift) -> float:
    x = player.coef * np.asarray(r)[player.game_day] + player.offset
    s = player.score
    total = float(np.sum(s * -np.logaddexp(0.0, -x) + (1.0 - s) * -np.logaddexp(0.0, x)))
    if player.anchor is None:
        total += -math.log1p(math.exp(-r[0])) - math.log1p(math.exp(r[0]))
    else:
        total -= (r[0] - player.anchor.mean) ** 2 / (2 * player.anchor.variance)
    for v, a, b in zip(drift_variances(player, drift), r[:-1], r[1:], strict=True):
        total -= (b - a) ** 2 / (2 * v)
    return -total


@pytest.mark.parametrize("anchor", [None, Anchor(0.7, 0.3)])
def test_newton_steps_reach_the_players_map_and_its_variance(anchor: Anchor | None) -> None:
    """W5 converges to the maximum a generic optimiser finds on the same posterior; W9 is
    the last diagonal entry of the inverse of −H."""
    rng = random.Random(11)
    player, drift = _player(rng, anchor=anchor), Drift()
    for _ in range(30):
        if newton_step(player, drift) < 1e-12:
            break
    found = scipy.optimize.minimize(
        _neg_posterior, np.zeros(len(player.days)), args=(player, drift), method="BFGS", tol=1e-10
    )
    assert player.r.tolist() == pytest.approx(list(found.x), abs=1e-5)
    eps = 1e-4
    n = len(player.days)
    hess = np.zeros((n, n))
    base = np.asarray(player.r)
    for i in range(n):  # numerical Hessian of the negative posterior
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            hess[i, j] = (
                _neg_posterior(base + e_i + e_j, player, drift)
                - _neg_posterior(base + e_i - e_j, player, drift)
                - _neg_posterior(base - e_i + e_j, player, drift)
                + _neg_posterior(base - e_i - e_j, player, drift)
            ) / (4 * eps * eps)
    assert last_day_variance(player, drift) == pytest.approx(np.linalg.inv(hess)[-1, -1], rel=1e-4)


def test_folding_old_days_barely_moves_the_last_day() -> None:
    """W8: a day folded into the next day's prior changes the MAP of the last day by far
    less than its uncertainty."""
    rng = random.Random(5)
    full, drift = _player(rng, days=12), Drift()
    folded = full.copy()
    for state in (full, folded):
        for _ in range(40):
            newton_step(state, drift)
    for _ in range(6):
        fold_days(folded, drift, len(folded.days) - 1)
        for _ in range(40):
            newton_step(folded, drift)
    assert len(folded.days) == 6 and folded.anchor is not None
    assert folded.weight_before == pytest.approx(float(full.day_weights()[:6].sum()))
    assert folded.days == full.days[6:] and len(folded.coef) < len(full.coef)
    sd = math.sqrt(last_day_variance(full, drift))
    assert abs(folded.r[-1] - full.r[-1]) < 0.05 * sd


def _world(
    seed: int, rounds: int, advantage: float
) -> tuple[list[RoundFacts], dict[str, float], list[FitGame]]:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(24)]
    skill = {p: rng.gauss(0.0, 1.0) for p in players}
    out, games = [], []
    for i in range(rounds):
        k = rng.randint(2, 4)
        big = k + (i % 2)
        picked = rng.sample(players, k + big)
        a, b = picked[:big], picked[big:]
        z = sum(skill[p] for p in a) / len(a) - sum(skill[p] for p in b) / len(b)
        z += advantage if len(a) > len(b) else 0.0
        win = rng.random() < 1 / (1 + math.exp(-z))
        out.append(RoundFacts(tuple(a), tuple(b), "A" if win else "B", extras={"day": i // 20}))
        games.append(FitGame(tuple(a), tuple(b), i // 20, float(win)))
    return out, skill, games


@pytest.mark.parametrize("mode", ["joint", "fixed"])
def test_the_full_fit_finds_the_extra_player_advantage(mode: str) -> None:
    """W10 on a world whose larger team has +0.6 natural: every fitted step is near it,
    jointly or with the ratings fixed, and the ratings order the players by skill."""
    _, skill, games = _world(3, 3000, 0.6)
    result = fit(games, Drift(), "simple", 15, epad_mode=mode)
    assert result.converged and result.iterations < 30
    for step in ("2", "3", "4"):
        assert result.epad[step] == pytest.approx(0.6, abs=0.25)
        assert result.epad_variance[step] < 0.05
    assert result.epad["9"] == 0.0 and result.epad_variance["9"] == pytest.approx(
        (1000 / NATURAL) ** 2
    )
    last = {p: state.r[-1] for p, state in result.players.items()}
    assert np.corrcoef([skill[p] for p in last], list(last.values()))[0, 1] > 0.9


def test_the_model_learns_online_and_refits_to_the_map() -> None:
    rounds, skill, games = _world(7, 1500, 0.6)
    model = Whr({"window_days": 8})
    states: dict[str, PlayerDays] = {}
    context: dict[str, object] = {}
    for f in rounds:
        keys = model.context_keys(f)
        rated = model.rate(states, f, {k: context[k] for k in keys if k in context})
        assert 0 < rated.p_a < 1
        states.update(rated.states)
        context.update(rated.context)
        assert all(len(s.days) <= 8 for s in rated.states.values())
    # the clock keeps the latest real day (W11) beside the epads
    assert sorted(context) == [*(EPAD + k for k in ("2", "3", "4")), CLOCK]
    assert all(0.2 < v["mean"] < 1.2 for k, v in context.items() if k != CLOCK)  # type: ignore[index]
    refitted = model.refit(states, rounds, context)
    assert refitted is not None
    full = fit(games, model.drift, "simple", 15, start={p: s.rating for p, s in states.items()})
    for p, state in refitted.states.items():
        assert state.r[-1] == pytest.approx(full.players[p].r[-1])
        assert state.variance == pytest.approx(full.variances[p][-1])
        assert len(state.days) <= 8
    assert refitted.context[EPAD + "3"]["mean"] == pytest.approx(full.epad["3"])
    online = np.corrcoef([skill[p] for p in states], [s.rating for s in states.values()])[0, 1]
    assert online > 0.8


def test_a_state_survives_its_json_and_an_admin_set() -> None:
    model = Whr()
    rounds, _, _ = _world(1, 200, 0.0)
    states: dict[str, PlayerDays] = {}
    for f in rounds:
        states.update(model.rate(states, f).states)
    for state in states.values():
        again = model.decode(model.encode(state))
        assert model.encode(again) == model.encode(state)
        assert model.fields(again) == model.fields(state)
    assert model.decode({}).days == [] and model.rating(model.new_state()) == 1500.0
    state = next(iter(states.values()))
    set_ = model.with_rating(state, 1800.0)
    assert model.rating(set_) == pytest.approx(1800.0) and set_.days == []
    assert set_.anchor is not None and set_.anchor.variance == state.variance
    # the set holds as the prior of the next day played
    rated = model.rate({"x": set_}, RoundFacts(("x",), ("y",), "B", extras={"day": 99}))
    assert 1700 < model.rating(rated.states["x"]) < 1800


def test_an_uneven_prediction_carries_the_epad() -> None:
    """W1: [2500, 1500] against [2000] is 50 % without epad, and the larger team's
    advantage with it."""
    model = Whr()
    a = PlayerDays(anchor=Anchor(to_natural(2500.0), 1.0))
    b = PlayerDays(anchor=Anchor(to_natural(1500.0), 1.0))
    c = PlayerDays(anchor=Anchor(to_natural(2000.0), 1.0))
    states = {"a": a, "b": b, "c": c}
    f = RoundFacts(("a", "b"), ("c",), "A", extras={"day": 1})
    assert model.context_keys(f) == (EPAD + "1", CLOCK)
    assert model.predict(states, f) == pytest.approx(0.5)
    ctx = {EPAD + "1": {"mean": 0.4, "precision": 10.0}}
    assert model.predict(states, f, ctx) == pytest.approx(1 / (1 + math.exp(-0.4)))
    assert Whr({"epad": "none"}).predict(states, f, ctx) == pytest.approx(0.5)


def test_a_rounds_day_comes_from_its_times() -> None:
    """W11: `day`, else the UTC date of started_at, ended_at, then received_at (not for a
    round imported without a time); None without any (the virtual clock's)."""
    assert round_day({}) is None
    assert round_day({"received_at": "1970-01-03T23:59:59+00:00", UNDATED: True}) is None
    assert round_day({"ended_at": "1970-01-02T01:00:00Z", UNDATED: True}) == 1
    assert round_day({"day": 12}) == 12
    assert round_day({"received_at": "1970-01-03T23:59:59+00:00"}) == 2
    assert round_day({"ended_at": "1970-01-02T01:00:00Z", "received_at": "1971-01-01"}) == 1
    assert round_day({"started_at": "1970-01-01T23:30:00-02:00", "ended_at": "1970-01-05"}) == 1


def test_the_virtual_clock_gives_a_typical_player_a_round_a_day() -> None:
    """W11 without a time, worked by hand: with n players seen, the day is ⌊t⌋, then t
    moves on by m/n. a–b (n 2): day 0, t 1; a–b: day 1, t 2; c–d (n 4): day 2, t 2.5;
    ab–cd: day 2, t 3.5; a–c: day 3, t 4."""
    clock = VirtualClock()
    days = []
    for played, new in ((2, 2), (2, 0), (2, 2), (4, 0), (2, 0)):
        day, clock = clock.date(None, played, new)
        days.append(day)
    assert days == [0, 1, 2, 2, 3]
    assert clock == VirtualClock(4.0, 4)
    rounds = [("a", "b"), ("a", "b"), ("c", "d"), ("a", "b", "c", "d"), ("a", "c")]
    assert virtual_days([(r, None) for r in rounds]) == [0, 1, 2, 2, 3]
    # a dated round keeps its day and moves no time; its players are not new after it, and
    # the clock goes on from its day: a–b day 7 (n 2); a–c (n 3): day 7, t 2/3; a–c: day 7,
    # t 4/3; a–c: day 8
    dated = [(("a", "b"), 7), (("a", "c"), None), (("a", "c"), None), (("a", "c"), None)]
    assert virtual_days(dated) == [7, 7, 7, 8]
    # a late report (a real day before the latest) keeps its place and moves no clock
    late = [(("a", "b"), None), (("a", "b"), None), (("a", "b"), 9000), (("a", "b"), 8999)]
    assert virtual_days(late) == [0, 1, 2, 1]


# W11 on one axis, worked by hand (days since 1970 in the tens of thousands, as the service's)
UNDATED_THEN_DATED = [
    (("a", "b"), None, 0),  # n 2: day 0, t 1
    (("a", "b"), None, 1),  # t 2
    (("a", "b"), 20000, 2),  # the first real day lands on the clock's day 2: shift −19998
    (("c", "d"), 20003, 5),  # n 4; three real days later
    (("a", "c"), None, 5),  # anchored at day 5 (t 2): day 5, t 2.5
    (("a", "d"), None, 5),  # t 3
    (("b", "c"), None, 6),  # t 3.5
    (("a", "b", "c", "d"), None, 6),  # 5 + ⌊3.5 − 2⌋ = 6, t 4.5
    (("c", "d"), 20003, 7),  # the clock (5 + ⌊4.5 − 2⌋ = 7) is past 20003's day 5: day 7
    (("a", "b"), 20010, 14),  # seven real days after 20003
]
DATED_THEN_UNDATED = [
    (("a", "b"), 100, 100),  # n 2
    (("a", "c"), 100, 100),  # n 3
    (("a", "b"), None, 100),  # anchored at day 100: day 100, t 2/3
    (("b", "c"), None, 100),  # t 4/3
    (("a", "c"), None, 101),  # t 2
    (("a", "b"), 101, 102),  # the clock's day 102 is past 101's place: shift 1
    (("a", "b"), None, 102),  # anchored at 102 (t 2): day 102, t 8/3
    (("a", "c"), 150, 151),  # real day 150, shifted by 1
]


@pytest.mark.parametrize("history", [UNDATED_THEN_DATED, DATED_THEN_UNDATED])
def test_real_days_and_the_clock_share_one_axis_online_and_in_the_fit(
    history: list[tuple[tuple[str, ...], int | None, int]],
) -> None:
    """W11: rounds with and without a time mixed, both ways: the clock is anchored at the
    latest real day, a real day never goes back before the clock, and the service's rounds,
    `virtual_days` and the full fit (with a season or not) give the days worked by hand."""
    expected = [day for _, _, day in history]
    assert virtual_days([(players, own) for players, own, _ in history]) == expected
    model = Whr()
    rounds = [
        RoundFacts(
            players[:1], players[1:], "AB"[i % 2], extras={} if own is None else {"day": own}
        )
        for i, (players, own, _) in enumerate(history)
    ]
    states: dict[str, PlayerDays] = {}
    context: dict[str, object] = {}
    for facts in rounds:
        keys = model.context_keys(facts)
        assert CLOCK in keys
        rated = model.rate(states, facts, {k: context[k] for k in keys if k in context})
        states.update(rated.states)
        context.update(rated.context)
    assert model.days(rounds) == expected
    for player, state in states.items():
        played = [day for (players, _, day) in history if player in players]
        # a day not later than the player's last (a late report) counts on that last day
        assert state.days == sorted({max(played[: i + 1]) for i in range(len(played))})
        assert state.days[-1] - state.days[0] < 100  # no gap of ~20,000 days
    fitted = model.fit(states, rounds, {})
    assert {p: fitted.players[p].days for p in states} == {p: s.days for p, s in states.items()}
    refitted = model.refit(states, rounds, context, seasons=[(5, 0.5)])
    assert refitted is not None
    for player, state in refitted.states.items():
        assert set(state.days) <= set(states[player].days)
        assert state.days[-1] == states[player].days[-1]


def test_rounds_without_a_time_are_dated_by_the_clock_online_and_in_the_fit() -> None:
    """The online rounds and the full fit give a history without times the same days
    (W11), and the clock sits in the pool's context."""
    model = Whr()
    states: dict[str, PlayerDays] = {}
    context: dict[str, object] = {}
    sides = [(("a",), ("b",)), (("a",), ("b",)), (("c",), ("d",)), (("a", "b"), ("c", "d"))]
    rounds = [RoundFacts(a, b, "A") for a, b in sides]
    for facts in rounds:
        assert CLOCK in model.context_keys(facts)
        rated = model.rate(states, facts, {CLOCK: context[CLOCK]} if context else {})
        states.update(rated.states)
        context.update(rated.context)
    assert context[CLOCK] == {"time": 3.5, "players": 4}
    assert {p: states[p].days for p in "abcd"} == {
        "a": [0, 1, 2],
        "b": [0, 1, 2],
        "c": [2],
        "d": [2],
    }
    fitted = model.fit(states, rounds, {})
    assert {p: fitted.players[p].days for p in "abcd"} == {p: states[p].days for p in "abcd"}


def test_a_round_with_a_side_that_did_not_play_teaches_nothing() -> None:
    model = Whr()
    state = PlayerDays(anchor=Anchor(0.5, 0.2), variance=0.2)
    f = RoundFacts(("a",), ("b",), "A", (), ("b",), extras={"day": 3})
    rated = model.rate({"b": state}, f)
    assert set(rated.states) == {"b"} and rated.context == {}
    assert model.encode(rated.states["b"]) == model.encode(state)


def test_folding_several_days_at_once_equals_one_at_a_time() -> None:
    rng = random.Random(9)
    one, drift = _player(rng, days=10), Drift()
    for _ in range(20):
        newton_step(one, drift)
    many = one.copy()
    for keep in range(9, 3, -1):
        fold_days(one, drift, keep)
    fold_days(many, drift, 4)
    assert many.days == one.days and many.r.tolist() == one.r.tolist()
    assert many.anchor == one.anchor and many.weight_before == one.weight_before
    assert many.game_day.tolist() == one.game_day.tolist()
    assert many.offset.tolist() == one.offset.tolist()


def test_a_stack_steps_each_player_as_alone() -> None:
    """W5 stacked: players side by side take the same steps and report the same last-day
    variances as each alone (their blocks are not linked)."""
    rng = random.Random(21)
    drift = Drift()
    players = [
        _player(rng, days=d, anchor=a) for d, a in ((5, None), (1, Anchor(0.3, 0.4)), (8, None))
    ]
    alone = [p.copy() for p in players]
    stack = Stack(players, drift)
    for _ in range(4):
        stack.step()
        for p in alone:
            newton_step(p, drift)
    variances = stack.last_day_variances()
    stack.unstack()
    for p, q, v in zip(players, alone, variances, strict=True):
        assert p.r.tolist() == pytest.approx(q.r.tolist(), abs=1e-12)
        assert v == pytest.approx(last_day_variance(q, drift), rel=1e-9)
    with pytest.raises(ValueError, match="kept day"):
        Stack([PlayerDays()], drift)


def test_a_newcomer_shows_w3s_spread_and_a_drift_of_zero_is_refused() -> None:
    """W9 before any game: the uncertainty of W3's virtual games (2 natural², 246 Elo)."""
    model = Whr()
    assert model.fields(model.new_state())["uncertainty"] == pytest.approx(math.sqrt(2.0) * NATURAL)
    with pytest.raises(ParameterError, match="variance_scale"):
        Whr({"game_variance": 0.0, "variance_scale": 0.0})
    Whr({"game_variance": 0.0, "variance_scale": 1.0})  # one of them is enough


def test_a_replayed_export_dates_by_time_and_leaves_the_pools_schedule_out() -> None:
    """W11 in a history: the date of `time`. An export's `refit_every` is the pool's job
    schedule, not something its replay can reproduce: the replay rates online."""
    from datetime import UTC, datetime

    from synelo.evaluation.adapters import HistoryInfo
    from synelo.evaluation.adapters import create_replay as replay_model
    from synelo.evaluation.history import Match

    info = HistoryInfo(2, {"model": "whr", "params": {"refit_every": 5, "window_days": 7}})
    replayed = replay_model("whr", {}, info)
    assert replayed.refit_every == 0  # type: ignore[attr-defined]
    assert replayed.model.params["window_days"] == 7  # type: ignore[attr-defined]
    match = Match(
        "m1",
        ("a",),
        ("b",),
        "A",
        time=datetime(1970, 1, 3, 23, 50, tzinfo=UTC),
        details={"ended_at": "1970-01-04T00:20:00+00:00"},
    )
    assert replayed.facts(match).extras["day"] == 2  # type: ignore[attr-defined]
