"""Mid-round team changes: odd joiner, F11, seed 001's minimal swaps — worked examples."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

import pytest

from synelo.balance import DEAD_TOLERANCE, Move, min_swaps, place_joiner, transfer_moves
from synelo.schemas import AutobalanceIn


def test_odd_joiner_goes_where_the_gap_is_least() -> None:
    ratings = [1500, 1200, 1400, 1100, 900]
    # A = 1500 + 1200 = 2700, B = 1400 + 1100 = 2500 (diff +200). The 900 joiner:
    # on A → |200 + 900| = 1100, on B → |200 − 900| = 700: B.
    assert place_joiner(ratings, [0, 1], [2, 3], 4) == "B"
    # A 150 joiner: on A → 350, on B → |200 − 150| = 50: B again; a weaker B side
    # does not matter, only the gap after.
    assert place_joiner([1500, 1200, 1400, 1100, 150], [0, 1], [2, 3], 4) == "B"
    # B stronger by 200 (swap the teams): the joiner goes to A.
    assert place_joiner(ratings, [2, 3], [0, 1], 4) == "A"


def test_joiner_to_uneven_teams_goes_to_the_smaller() -> None:
    assert place_joiner([1000, 1000, 1000, 3000], [0, 1], [2], 3) == "B"


def test_f11_one_move_is_the_player_closest_to_t() -> None:
    # A: 1500 1300 1100 1000 (4900), B: 1200 1000 (2200): Δk = 2, one move.
    # T = (4900 − 2200)/2 = 1350; the A player closest to 1350 is 1300 (gap after:
    # |3600 − 3500| = 100), as the seed says.
    ratings = [1500, 1300, 1100, 1000, 1200, 1000]
    out = transfer_moves(ratings, [0, 1, 2, 3], [4, 5])
    assert out.moves == (Move(1, "A", "B"),)
    assert (out.gap_before, out.gap_after, out.size_a, out.size_b) == (2700, 100, 3, 3)


def test_f11_when_the_larger_team_is_the_weaker_one() -> None:
    # Seed erratum: T = |Σ_A − Σ_B|/2 drops the sign. A (3 players, 2400) is weaker than
    # B (1 player, 2600): D = 2400 − 2600 = −200, so moving r leaves |−200 − 2r|: the
    # lightest A player (700) is best (gap 1600), not the one closest to |D|/2 = 100.
    ratings = [1000, 700, 700, 2600]
    out = transfer_moves(ratings, [0, 1, 2], [3])
    assert out.moves[0].player in (1, 2) and out.gap_after == 1600


def test_f11_joint_moves_beat_greedy_at_delta_k_4() -> None:
    # A: 900 500 500 300 300 300 (2800), B: 400 400 (800). Δk = 4: two moves, D = 2000.
    # Greedy: 900 is closest to T = 1000 → D = 2000 − 1800 = 200, then the one closest to
    # 100 is a 300 → |200 − 600| = 400. Jointly, 500 + 500 = 1000 leaves a gap of 0.
    ratings = [900, 500, 500, 300, 300, 300, 400, 400]
    out = transfer_moves(ratings, [0, 1, 2, 3, 4, 5], [6, 7])
    assert {m.player for m in out.moves} == {1, 2}
    assert out.gap_after == 0 and (out.size_a, out.size_b) == (4, 4)
    greedy = _greedy_f11(ratings, [0, 1, 2, 3, 4, 5], [6, 7])
    assert greedy == 400


def _greedy_f11(ratings, a, b) -> int:
    a, b = list(a), list(b)
    while len(a) - len(b) >= 2:
        t = (sum(ratings[i] for i in a) - sum(ratings[i] for i in b)) / 2
        mover = min(a, key=lambda i: abs(ratings[i] - t))
        a.remove(mover)
        b.append(mover)
    return abs(sum(ratings[i] for i in a) - sum(ratings[i] for i in b))


def test_f11_joint_is_exact_against_brute_force() -> None:
    rng = random.Random(3)
    for _ in range(30):
        n_a, n_b = rng.randint(4, 9), rng.randint(0, 2)
        ratings = [rng.randint(100, 2500) for _ in range(n_a + n_b)]
        a, b = list(range(n_a)), list(range(n_a, n_a + n_b))
        count = (n_a - n_b) // 2
        d = sum(ratings[i] for i in a) - sum(ratings[i] for i in b)
        best = min(
            abs(d - 2 * sum(ratings[i] for i in c)) for c in itertools.combinations(a, count)
        )
        assert transfer_moves(ratings, a, b).gap_after == best


def test_f11_leaves_locked_and_party_players_unless_nothing_else_works() -> None:
    ratings = [1300, 1100, 1000, 900, 1000]
    # A has 4, B has 1: Δk = 3, one move (sizes 3 v 2). T = (4300 − 1000)/2 = 1650: 1300,
    # then 1100, are closest, but 1300 is locked and 1100 is in a party; 900 is the free one.
    out = transfer_moves(ratings, [0, 1, 2, 3], [4], locked=[0], parties=[[1, 2]])
    assert [m.player for m in out.moves] == [3]
    # Everyone free is too few: then party members may move, locked players last.
    out = transfer_moves(ratings, [0, 1, 2, 3], [4], locked=[0, 3], parties=[[1, 2]])
    assert [m.player for m in out.moves] == [1]


def test_dead_first_takes_a_dead_player_within_the_tolerance() -> None:
    # A: 1500 1300 1240 1000 (5040) v B: 1200 1000 (2200); Δk = 2, one move; Θ = 1000.
    # Moving 1500 leaves 3540 v 3700, gap 160: P(A) = 1/(1 + e^0.16) = 0.460085, 0.039915
    # from ½. Moving 1300 leaves 3740 v 3500, gap 240: P(A) = 0.559714, 0.059714 from ½.
    # 0.059714 ≤ 0.039915 + 0.02 = 0.059915: with 1500 alive, the dead 1300 goes.
    ratings = [1500, 1300, 1240, 1000, 1200, 1000]
    best = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], theta=1000)
    assert best.moves == (Move(0, "A", "B"),) and best.gap_after == 160
    dead = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], alive={0}, theta=1000)
    assert dead.moves == (Move(1, "A", "B"),) and dead.gap_after == 240
    # Moving 1240 leaves gap 360: P(A) = 0.589040, 0.089040 from ½, past 0.059915. With
    # 1300 alive too, the live 1500 stays the choice: the best transfer's guarantee holds.
    kept = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], alive={0, 1}, theta=1000)
    assert kept.moves == (Move(0, "A", "B"),) and kept.gap_after == 160
    # Θ = 900 stretches the same gaps: 0.044328 + 0.02 < 0.066274 (gap 240), so 1500 goes.
    steep = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], alive={0}, theta=900)
    assert steep.moves == (Move(0, "A", "B"),)


def test_the_request_states_the_tolerance_the_rule_uses() -> None:
    description = AutobalanceIn.model_fields["alive"].description or ""
    assert f"at most {DEAD_TOLERANCE} further from 0.5" in description


def test_dead_first_between_equal_players_needs_no_tolerance() -> None:
    # Five 1000s v one: Δk = 4, two moves, and every pair is as good (gap 0). The rating
    # search alone takes the first two; with them alive the two dead ones go, even at a
    # tolerance of 0.
    ratings = [1000] * 6
    assert [m.player for m in transfer_moves(ratings, [0, 1, 2, 3, 4], [5]).moves] == [0, 1]
    out = transfer_moves(ratings, [0, 1, 2, 3, 4], [5], alive={0, 1, 2}, tolerance=0.0)
    assert [m.player for m in out.moves] == [3, 4] and out.gap_after == 0


def test_dead_first_keeps_the_locked_and_party_tiers() -> None:
    # Four 1000s v two, one move. 0 is alive, 1 dead but locked, 2 dead but in a party with
    # B's 4: the free tier is {0, 3}, and its dead player 3 goes, not 1 or 2.
    ratings = [1000] * 6
    out = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], alive={0}, locked={1}, parties=[[2, 4]])
    assert out.moves == (Move(3, "A", "B"),)
    # Every free player alive: the free tier has no dead transfer, and a live one goes.
    out = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], alive={0, 3}, locked={1}, parties=[[2, 4]])
    assert out.moves == (Move(0, "A", "B"),)


def test_dead_first_reads_the_given_odds() -> None:
    # A model's own P(A) replaces F1's: one that calls every pair of teams even accepts the
    # dead 1240 that F1 (Θ = 1000) refused above. It is asked about the teams after each
    # candidate move, A first.
    ratings = [1500, 1300, 1240, 1000, 1200, 1000]
    asked: list[tuple[list[int], list[int]]] = []

    def even(a: Sequence[int], b: Sequence[int]) -> float:
        asked.append((sorted(a), sorted(b)))
        return 0.5

    out = transfer_moves(ratings, [0, 1, 2, 3], [4, 5], alive={0, 1}, odds=even)
    assert out.moves == (Move(2, "A", "B"),)
    assert sorted(asked) == [([0, 1, 3], [2, 4, 5]), ([1, 2, 3], [0, 4, 5])]
    # B the larger team: the teams still reach `odds` as (A, B).
    asked.clear()
    out = transfer_moves(ratings, [4, 5], [0, 1, 2, 3], alive={0, 1}, odds=even)
    assert out.moves == (Move(2, "B", "A"),)
    assert sorted(asked) == [([0, 4, 5], [1, 2, 3]), ([2, 4, 5], [0, 1, 3])]


def test_dead_first_against_brute_force() -> None:
    """Over random rounds: the answer is never more than the tolerance further from ½ than the
    best transfer, and a live player moves only when no dead transfer is within it."""
    rng = random.Random(35)
    theta = 1200.0

    def off(d: float) -> float:
        return abs(1 / (1 + math.exp(-d / theta)) - 0.5)

    switched = live_kept = 0
    for _ in range(200):
        n_a, n_b = rng.randint(4, 10), rng.randint(0, 2)
        ratings = [rng.randint(600, 1800) for _ in range(n_a + n_b)]
        a, b = list(range(n_a)), list(range(n_a, n_a + n_b))
        alive = {i for i in a if rng.random() < 0.6}
        count = (n_a - n_b) // 2
        d = sum(ratings[i] for i in a) - sum(ratings[i] for i in b)
        every = list(itertools.combinations(a, count))
        best = min(off(d - 2 * sum(ratings[i] for i in c)) for c in every)
        dead = [c for c in every if not alive & set(c)]
        best_dead = min((off(d - 2 * sum(ratings[i] for i in c)) for c in dead), default=None)
        out = transfer_moves(ratings, a, b, alive=alive, theta=theta)
        moved = {m.player for m in out.moves}
        got = off(out.sum_a - out.sum_b)
        assert got <= best + DEAD_TOLERANCE + 1e-12
        if best_dead is not None and best_dead <= best + DEAD_TOLERANCE:
            assert not moved & alive and got == pytest.approx(best_dead)
            switched += best_dead > best
        else:
            assert got == pytest.approx(best)
            live_kept += bool(moved & alive)
    # both ways decided: 13 dead transfers taken though worse, 160 live ones kept (seed 35)
    assert (switched, live_kept) == (13, 160)


def test_min_swaps_places_the_unassigned_then_swaps_pairs() -> None:
    # Seed 001: A 1500 1400 1300 (4200), B 1000 900 800 (2700); newcomers 1200 1100 700 600.
    # Sizes even out with two newcomers a side; the newcomer split nearest balance puts
    # 700 + 600 on A (A 5500, B 5000). Then the best pair swap: 1500 ↔ 1200 changes the
    # difference by 2·300 → A 5200, B 5300, |−100| < 500; no swap improves on 100.
    ratings = [1500, 1400, 1300, 1000, 900, 800, 1200, 1100, 700, 600]
    out = min_swaps(ratings, [0, 1, 2], [3, 4, 5], unassigned=[6, 7, 8, 9])
    assert out.gap_after == 100 and (out.size_a, out.size_b) == (5, 5)
    moved = {(m.player, m.from_team, m.to_team) for m in out.moves}
    assert (0, "A", "B") in moved
    assert {m.player for m in out.moves if m.from_team == "none"} == {6, 7, 8, 9}


def test_min_swaps_stops_at_the_seeds_local_optimum() -> None:
    # A 1000 1000 1300, B 1000 1000 1000: d = 300. Every swap changes d by 2·(r_a − r_b):
    # 1300 ↔ 1000 leaves |300 − 600| = 300, no better; nothing moves.
    out = min_swaps([1000, 1000, 1300, 1000, 1000, 1000], [0, 1, 2], [3, 4, 5])
    assert out.gap_before == 300 and out.gap_after == 300 and out.moves == ()


def test_min_swaps_never_swaps_locked_players() -> None:
    # A 1000 1200 1800 (4000), B 1000 1000 1400 (3400): d = 600. Unlocked, 1800 ↔ 1400 would
    # leave |600 − 800| = 200 too, but it comes later in team order than 1200 ↔ 1000 (also
    # 200). With 1800 locked: 1200 ↔ 1000 → 200; then nothing improves on 200.
    out = min_swaps([1000, 1200, 1800, 1000, 1000, 1400], [0, 1, 2], [3, 4, 5], locked=[2])
    assert out.gap_after == 200
    assert {(m.player, m.from_team, m.to_team) for m in out.moves} == {(1, "A", "B"), (3, "B", "A")}


def test_f11_under_f1u_the_movers_sum_puts_f1us_logit_at_zero() -> None:
    """f1u_transfer_sum, hand-worked: 7 against 6 after the move, Σ_L 10,000, Σ_S 9,000,
    Θ 600: c = 600·ln(7/6)/7 = 13.2129…, M = (6·10,000 − 7·9,000 + c·42)/13
    = (−3,000 + 554.94…)/13 = −188.08…; at equal sizes, F11's T = (Σ_L − Σ_S)/2."""
    from synelo.balance.autobalance import f1u_transfer_sum

    c = 600 * math.log(7 / 6) / 7
    assert f1u_transfer_sum(10_000, 9_000, 7, 6, 600) == pytest.approx(
        (6 * 10_000 - 7 * 9_000 + c * 42) / 13
    )
    assert f1u_transfer_sum(10_000, 9_000, 6, 6, 600) == pytest.approx(500)
    # the logit at that sum is 0: (Σ_L − M)/7 − (Σ_S + M)/6 = −c
    m = f1u_transfer_sum(10_000, 9_000, 7, 6, 600)
    assert (10_000 - m) / 7 - (9_000 + m) / 6 == pytest.approx(-c)


def test_f11_under_f1u_moves_the_player_f1u_calls_most_even() -> None:
    """8 against 5 in a headcount pool: one player moves, the teams end 7 against 6, and
    the mover is the one whose move leaves F1u's |logit| least (brute force); with the
    seed's sums it is the one F1 calls most even, another player on these ratings."""
    from synelo.ratings.synelo import roster_probability

    rng = random.Random(11)
    theta, differs = 600.0, 0
    for _ in range(200):
        ratings = [round(rng.gauss(1500, 300)) for _ in range(13)]
        a, b = list(range(8)), list(range(8, 13))

        def off(
            mover: int, headcount: bool, r: list[int] = ratings, a: list[int] = a, b: list[int] = b
        ) -> float:
            stay = [r[i] for i in a if i != mover]
            gain = [r[i] for i in b] + [r[mover]]
            p = roster_probability(sum(stay), 7, sum(gain), 6, theta, headcount)
            return abs(p - 0.5)

        for headcount in (True, False):
            out = transfer_moves(ratings, a, b, theta=theta, headcount=headcount)
            (move,) = out.moves
            assert (out.size_a, out.size_b) == (7, 6)
            best = min(off(i, headcount) for i in a)
            assert off(move.player, headcount) == pytest.approx(best, abs=1e-12)
        by_f1u = transfer_moves(ratings, a, b, theta=theta, headcount=True).moves[0].player
        by_sums = transfer_moves(ratings, a, b, theta=theta).moves[0].player
        differs += by_f1u != by_sums
    assert differs > 0  # the rule changes what is chosen
