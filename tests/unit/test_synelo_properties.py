"""Properties of the SynElo update that must hold for every input (hypothesis)."""

from __future__ import annotations

import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from synelo.ratings import (
    ConvergenceWindow,
    PlayerChange,
    PlayerRecord,
    Rater,
    RecordBook,
    SynEloParams,
    apply_change,
    convergence,
    expected_score,
    k_factor,
    rate_round,
    round_half_even,
    seed_theta,
    updated_rating,
    win_probability,
)

P = SynEloParams()
FAST = settings(max_examples=150, deadline=None)
ROUNDS = settings(max_examples=60, deadline=None)  # whole rounds are costlier to generate

ratings = st.integers(min_value=P.r_min, max_value=P.r_max)
scores = st.sampled_from([0.0, 0.5, 1.0])
probs = st.floats(min_value=0.0, max_value=1.0)
winners = st.sampled_from(["A", "B", "draw"])
thetas = st.integers(min_value=1, max_value=12).map(seed_theta)
entries = st.tuples(ratings, probs, scores)


@st.composite
def windows(draw: st.DrawFn, max_size: int = 9, max_entries: int = 14) -> ConvergenceWindow:
    w = ConvergenceWindow(draw(st.integers(min_value=2, max_value=max_size)))
    for r, p, s in draw(st.lists(entries, max_size=max_entries)):
        w.append(r, p, s)
    return w


@st.composite
def records(draw: st.DrawFn) -> PlayerRecord:
    return PlayerRecord(
        draw(ratings),
        draw(st.integers(min_value=0, max_value=120)),
        draw(windows(max_size=5, max_entries=6)),
    )


@st.composite
def rounds(draw: st.DrawFn) -> tuple[list[int], list[int], list[tuple[str, str, PlayerRecord]]]:
    """Round-start rosters and participants (the roster players plus some late joiners)."""
    na = draw(st.integers(min_value=1, max_value=4))
    nb = draw(st.integers(min_value=1, max_value=4))
    parts = []
    for i in range(na + nb):
        parts.append((f"p{i}", "A" if i < na else "B", draw(records())))
    roster_a = [rec.rating for _, side, rec in parts if side == "A"]
    roster_b = [rec.rating for _, side, rec in parts if side == "B"]
    for j in range(draw(st.integers(min_value=0, max_value=2))):
        parts.append((f"late{j}", draw(st.sampled_from(["A", "B"])), draw(records())))
    return roster_a, roster_b, parts


def swapped(side: str) -> str:
    return "B" if side == "A" else "A"


def swapped_winner(winner: str) -> str:
    return winner if winner == "draw" else swapped(winner)


# --- the update ---------------------------------------------------------------------------


@FAST
@given(
    ratings,
    st.floats(min_value=0.0, max_value=P.k_max),
    scores,
    probs,
    st.integers(min_value=1, max_value=200),
)
def test_update_is_an_integer_never_below_floor(
    rating: int, k: float, s: float, p: float, rounds_after: int
) -> None:
    new = updated_rating(rating, k, s, p, rounds_after, P)
    assert type(new) is int
    assert new >= P.r_min
    # it moves by K·(S − P) up to rounding, unless floored or capped
    raw = rating + k * (s - p)
    if new == P.r_min:
        assert raw <= P.r_min + 0.5
    elif new != P.r_shadow_cap:
        assert abs(new - raw) <= 0.5


@ROUNDS
@given(rounds(), winners, thetas)
def test_rate_round_keeps_integers_above_floor(rnd, winner: str, theta: float) -> None:
    roster_a, roster_b, parts = rnd
    params = P.with_changes(theta=theta)
    rr = rate_round(roster_a, roster_b, parts, winner, params)
    assert len(rr.changes) == len(parts)
    for ch, (pid, side, rec) in zip(rr.changes, parts, strict=True):
        assert (ch.player, ch.side, ch.before) == (pid, side, rec.rating)
        assert type(ch.after) is int and ch.after >= P.r_min
        assert ch.rounds_played == rec.rounds_played + 1
        # the direction of the change follows S − P
        if ch.after not in (P.r_min, P.r_shadow_cap):
            if ch.s > ch.p:
                assert ch.after >= ch.before
            elif ch.s < ch.p:
                assert ch.after <= ch.before


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=4, unique=True),
            winners,
        ),
        min_size=1,
        max_size=60,
    )
)
def test_many_rounds_stay_integer_and_above_floor(schedule) -> None:
    """Six players, each round a random team A (the rest are team B), records moved forward."""
    recs = [PlayerRecord(P.r0, 0, ConvergenceWindow(8)) for _ in range(6)]
    for team_a, winner in schedule:
        parts = [(str(i), "A" if i in team_a else "B", recs[i]) for i in range(6)]
        rr = rate_round(
            [recs[i].rating for i in range(6) if i in team_a],
            [recs[i].rating for i in range(6) if i not in team_a],
            parts,
            winner,
            P,
        )
        for ch in rr.changes:
            apply_change(recs[int(ch.player)], ch)
    for rec in recs:
        assert type(rec.rating) is int and rec.rating >= P.r_min
        assert rec.rounds_played == len(schedule)
        assert len(rec.window) == min(len(schedule), 8)
        assert rec.window.ratings[-1] == rec.rating


@ROUNDS
@given(rounds(), winners, thetas)
def test_swapping_teams_mirrors_p_and_keeps_every_change(rnd, winner: str, theta: float) -> None:
    roster_a, roster_b, parts = rnd
    params = P.with_changes(theta=theta)
    rr = rate_round(roster_a, roster_b, parts, winner, params)
    mirror_parts = [(pid, swapped(side), rec) for pid, side, rec in parts]
    mr = rate_round(roster_b, roster_a, mirror_parts, swapped_winner(winner), params)
    assert math.isclose(mr.p_a, 1.0 - rr.p_a, rel_tol=0, abs_tol=1e-15)
    assert (mr.sum_a, mr.sum_b) == (rr.sum_b, rr.sum_a)
    for a, b in zip(rr.changes, mr.changes, strict=True):
        assert a.player == b.player and a.side == swapped(b.side)
        assert (a.before, a.after, a.delta, a.s) == (b.before, b.after, b.delta, b.s)
        assert a.k == b.k
        assert math.isclose(a.p, b.p, rel_tol=0, abs_tol=1e-15)


@st.composite
def equal_sum_rosters(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    a = draw(st.lists(ratings, min_size=1, max_size=6))
    total = sum(a)
    nb = draw(st.integers(min_value=1, max_value=6))
    assume(nb * P.r_min <= total <= nb * P.r_max)
    # split `total` into nb ratings, each within [r_min, r_max]
    b = []
    left = total
    for i in range(nb - 1):
        rest = nb - 1 - i
        lo = max(P.r_min, left - rest * P.r_max)
        hi = min(P.r_max, left - rest * P.r_min)
        x = draw(st.integers(min_value=lo, max_value=hi))
        b.append(x)
        left -= x
    b.append(left)
    assert sum(b) == total and all(P.r_min <= x <= P.r_max for x in b)
    return a, b


@ROUNDS
@given(equal_sum_rosters(), st.lists(records(), min_size=1, max_size=4), thetas)
def test_draw_between_equal_sums_changes_nothing(rosters, recs, theta: float) -> None:
    roster_a, roster_b = rosters
    parts = [(f"p{i}", "AB"[i % 2], rec) for i, rec in enumerate(recs)]
    rr = rate_round(roster_a, roster_b, parts, "draw", P.with_changes(theta=theta))
    assert rr.p_a == 0.5
    for ch, (_, _, rec) in zip(rr.changes, parts, strict=True):
        graduating_above_cap = rec.rounds_played + 1 == P.t_shadow and rec.rating > P.r_shadow_cap
        if graduating_above_cap:
            assert ch.after == P.r_shadow_cap
        else:
            assert ch.after == ch.before and ch.delta == 0


# --- F1 -----------------------------------------------------------------------------------


@FAST
@given(
    st.integers(min_value=0, max_value=120_000), st.integers(min_value=0, max_value=120_000), thetas
)
def test_p_a_plus_p_b_is_one(sum_a: int, sum_b: int, theta: float) -> None:
    p_a = win_probability(sum_a, sum_b, theta)
    assert 0.0 <= p_a <= 1.0
    assert math.isclose(
        expected_score(p_a, "A") + expected_score(p_a, "B"), 1.0, rel_tol=0, abs_tol=1e-15
    )
    p_b = win_probability(sum_b, sum_a, theta)
    assert math.isclose(p_a + p_b, 1.0, rel_tol=0, abs_tol=1e-15)
    if sum_a > sum_b:
        assert p_a >= 0.5 >= p_b
    elif sum_a == sum_b:
        assert p_a == p_b == 0.5


@FAST
@given(
    st.integers(min_value=-120_000, max_value=120_000),
    st.integers(min_value=-120_000, max_value=120_000),
    thetas,
)
def test_p_a_is_monotone_in_the_gap(d1: int, d2: int, theta: float) -> None:
    assume(d1 != d2)
    lo, hi = sorted((d1, d2))
    p_lo = win_probability(lo, 0, theta)
    p_hi = win_probability(hi, 0, theta)
    assert p_lo <= p_hi
    # strictly, while neither end is saturated (|gap|/Θ ≤ 5: the slope is ≥ e^−5/(4Θ))
    if abs(lo) <= 5 * theta and abs(hi) <= 5 * theta:
        assert p_lo < p_hi
    # only the gap matters, not the sums themselves
    assert win_probability(lo + 50_000, 50_000, theta) == p_lo


@FAST
@given(
    st.floats(min_value=-1e308, max_value=1e308),
    st.floats(min_value=-1e308, max_value=1e308),
    st.floats(min_value=1e-300, max_value=1e6),
)
def test_win_probability_never_overflows(sum_a: float, sum_b: float, theta: float) -> None:
    p = win_probability(sum_a, sum_b, theta)
    assert not math.isnan(p)
    assert 0.0 <= p <= 1.0


def test_win_probability_saturates_for_huge_gaps() -> None:
    assert win_probability(1e6, 0, 400) == 1.0
    assert win_probability(0, 1e6, 400) == 0.0
    assert win_probability(1e308, -1e308, 1e-300) == 1.0  # the gap itself overflows to inf
    assert win_probability(-1e308, 1e308, 1e-300) == 0.0


# --- F3–F5 --------------------------------------------------------------------------------


@FAST
@given(windows(), ratings)
def test_c_and_k_are_bounded(w: ConvergenceWindow, rating: int) -> None:
    c = convergence(w, P)
    assert 0.0 <= c <= 1.0
    if len(w) < 2:
        assert c == 1.0
    k = k_factor(c, rating, P)
    assert P.k_min <= k <= P.k_max


@FAST
@given(
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=-100_000, max_value=100_000),
    st.floats(min_value=0.0, max_value=50.0),
    st.floats(min_value=0.0, max_value=200.0),
)
def test_k_is_between_k_min_and_k_max(c: float, rating: int, k_min: float, span: float) -> None:
    params = P.with_changes(k_min=k_min, k_max=k_min + span)
    k = k_factor(c, rating, params)
    assert params.k_min <= k <= params.k_max
    if c == 1.0 and rating == params.r0:
        assert k == params.k_max
    if c == 0.0:
        assert k == params.k_min


@FAST
@given(st.floats(min_value=0.0, max_value=1.0), ratings, ratings)
def test_k_is_largest_at_r0_and_symmetric(c: float, r1: int, r2: int) -> None:
    if abs(r1 - P.r0) > abs(r2 - P.r0):
        r1, r2 = r2, r1
    assert k_factor(c, r1, P) >= k_factor(c, r2, P)
    d = r1 - P.r0
    assert k_factor(c, P.r0 + d, P) == k_factor(c, P.r0 - d, P)


@ROUNDS
@given(
    rounds(),
    winners,
    thetas,
    st.integers(min_value=0, max_value=60),
    st.floats(min_value=50.0, max_value=2000.0),
)
def test_rate_round_is_the_formula_functions_bit_for_bit(
    rnd, winner: str, theta: float, t_shadow: int, sigma: float
) -> None:
    """rate_round's loop writes F2–F5 out for speed; it must equal composing
    convergence, k_factor and updated_rating exactly, shadow cap and floor included."""
    roster_a, roster_b, parts = rnd
    params = P.with_changes(theta=theta, t_shadow=t_shadow, sigma=sigma)
    rr = rate_round(roster_a, roster_b, parts, winner, params)
    for ch, (_, side, rec) in zip(rr.changes, parts, strict=True):
        p = expected_score(rr.p_a, side)
        s = 0.5 if winner == "draw" else float(winner == side)
        k = k_factor(convergence(rec.window, params), rec.rating, params)
        assert (ch.p, ch.s, ch.k) == (p, s, k)
        assert ch.after == updated_rating(rec.rating, k, s, p, rec.rounds_played + 1, params)


@FAST
@given(
    st.one_of(
        st.floats(min_value=-1e15, max_value=1e15),
        st.integers(min_value=-(10**6), max_value=10**6).map(lambda i: i / 2),
        st.integers(min_value=-(10**6), max_value=10**6).map(lambda i: i / 4),
    )
)
def test_round_half_even_is_pythons_round(x: float) -> None:
    assert round_half_even(x) == round(x)
    assert type(round_half_even(x)) is int


@ROUNDS
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(min_value=0, max_value=9), min_size=1, max_size=4, unique=True),
            st.integers(min_value=1, max_value=3),
            winners,
        ),
        min_size=1,
        max_size=25,
    ),
    thetas,
    st.integers(min_value=0, max_value=8),
)
def test_play_equals_rate_round_then_apply_change(schedule, theta: float, t_shadow: int) -> None:
    """The replay's `Rater.play` moves a RecordBook exactly as the service's path moves its
    records: rate_round from the round-start sums, then apply_change per participant."""
    params = P.with_changes(theta=theta, t_shadow=t_shadow, window=4)
    book, rater, mine = RecordBook(params), Rater(params), {}
    for players, split, winner in schedule:
        ids = [f"p{i}" for i in players]
        if len(ids) < 2:
            continue
        cut = min(split, len(ids) - 1)
        team_a, team_b = tuple(ids[:cut]), tuple(ids[cut:])
        for pid in ids:
            mine.setdefault(pid, PlayerRecord(params.r0, 0, ConvergenceWindow(params.window)))
        parts = [(pid, "A", mine[pid]) for pid in team_a] + [
            (pid, "B", mine[pid]) for pid in team_b
        ]
        rr = rate_round(
            [mine[p].rating for p in team_a],
            [mine[p].rating for p in team_b],
            parts,
            winner,
            params,
        )
        for ch in rr.changes:
            apply_change(mine[ch.player], ch)
        assert rater.play(book, team_a, team_b, winner) == rr.p_a
        for pid, rec in mine.items():
            got = book.records[pid]
            assert (got.rating, got.rounds_played) == (rec.rating, rec.rounds_played)
            assert got.window.ratings == rec.window.ratings
            assert got.window.statistics() == rec.window.statistics()


def test_player_change_is_a_value() -> None:
    """A PlayerChange compares, hashes, pickles and copies by value, as the named tuple it
    replaced did (the compiled class would otherwise compare by identity)."""
    import copy
    import pickle

    change = PlayerChange("p1", "A", 1000, 1036, 72.0, 0.5, 1.0, 1)
    assert pickle.loads(pickle.dumps(change)) == change
    assert copy.deepcopy(change) == change and hash(copy.copy(change)) == hash(change)
    assert change != PlayerChange("p1", "A", 1000, 1035, 72.0, 0.5, 1.0, 1)
    assert change.delta == 36


def test_a_match_built_with_lists_replays_like_one_built_with_tuples() -> None:
    """`Rater.play` reads tuples (natively, in the compiled loop); `Match` makes its sides
    tuples, so a match built by hand with lists replays the same."""
    from synelo.evaluation.adapters import HistoryInfo, create_replay
    from synelo.evaluation.history import Match

    listed = Match("m", ["a", "b"], ["c"], "A")  # type: ignore[arg-type]
    assert isinstance(listed.team_a, tuple) and isinstance(listed.team_b, tuple)
    one, two = (create_replay("synelo", {}, HistoryInfo(2)) for _ in range(2))
    assert one.step(listed) == two.step(Match("m", ("a", "b"), ("c",), "A"))
    assert one.ratings() == two.ratings()
