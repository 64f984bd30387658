"""The Sector's Edge split comparison: seeded, the original even with parties whole, the
community proposal with parties whole but free sizes, and metrics checked by hand."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from synelo.balance.sectors_edge import SEPlayer, sorted_power
from synelo.sim.history import player_id
from synelo.sim.scoreboard import Lobby, ScoreboardConfig, generate
from synelo.sim.sectors_edge_splits import (
    Assignment,
    SplitsConfig,
    assignments,
    community_split,
    compare,
    original_split,
    summarise,
    warm_up,
    win_chances,
)

SMALL = SplitsConfig(ScoreboardConfig(players=80, matches=400, seed=3), lobbies=120)


def test_the_same_config_gives_the_same_figures() -> None:
    assert compare(SMALL) == compare(SMALL)
    first = [d.splits for d in assignments(SMALL)]
    assert first == [d.splits for d in assignments(SMALL)]
    other = SplitsConfig(ScoreboardConfig(players=80, matches=400, seed=4), lobbies=120)
    assert first != [d.splits for d in assignments(other)]


def test_warm_up_keeps_one_place_value_per_player_and_match() -> None:
    world = ScoreboardConfig(players=60, matches=50, seed=2)
    population, history = warm_up(world)
    assert len(population.skill) == 60
    lines, _ = generate(world)
    for mode, per_player in history.items():
        seated = sum(len(line["player_scores"]) for line in lines[1:] if line["mode"] == mode)
        assert sum(map(len, per_player)) == seated  # one place value a player and match
        assert all(0 < x <= 1 for values in per_player for x in values)
    first = lines[1]
    values = [history[first["mode"]][int(p[1:]) - 1][0] for p in first["player_scores"]]
    n = len(values)
    assert sorted(values) == pytest.approx(sorted((n - i) / n for i in range(n)), abs=0.5 / n)


def test_original_is_k_v_k_and_community_keeps_parties_but_not_sizes() -> None:
    uneven = 0
    for drawn in assignments(SMALL):
        lobby, k = drawn.lobby, drawn.lobby.team_size
        for method, (a, b) in drawn.splits.items():
            assert sorted(a + b) == sorted(lobby.players), method
            for party in lobby.parties:
                assert set(party) <= set(a) or set(party) <= set(b), method
            if method != "community":
                assert len(a) == len(b) == k, method
        a, b = drawn.splits["community"]
        uneven += len(a) != len(b)
        rows = {r.method: r for r in drawn.rows}
        assert (rows["community"].size_a, rows["community"].size_b) == (len(a), len(b))
    assert uneven > 0
    metrics = compare(SMALL).metrics["all"]
    assert metrics["original"].max_size_gap == metrics["random"].max_size_gap == 0
    assert metrics["community"].max_size_gap >= 2


def test_community_gives_the_superteam_three_against_thirteen() -> None:
    # The proposal's Example Two with a 16th player for an 8v8: the party 11, 11, 10
    # (× 1.20 = 38.4) outweighs all 13 others (33), so every one of them goes to B.
    weights = [11, 11, 10, 5, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1]
    lobby = Lobby("SAL", tuple(range(16)), ((0, 1, 2),))
    a, b = community_split(lobby, dict(enumerate(map(float, weights))))
    assert (sorted(a), len(b)) == ([0, 1, 2], 13)
    # The original seats 8 a side around the same party.
    a, b = original_split(lobby, dict(enumerate(map(float, weights))))
    assert len(a) == len(b) == 8 and ({0, 1, 2} <= set(a) or {0, 1, 2} <= set(b))


def test_the_original_split_is_exact_with_parties() -> None:
    """Against every choice of whole units that seats k players on A."""
    rng = random.Random(5)
    checked = 0
    for _ in range(40):
        k = rng.choice([3, 8])
        sizes: list[int] = []
        while sum(sizes) < 2 * k:
            sizes.append(min(rng.choice([1, 1, 1, 2, 3]), 2 * k - sum(sizes)))
        units, start = [], 0
        for size in sizes:
            units.append(tuple(range(start, start + size)))
            start += size
        seatable = any(
            sum(sizes[i] for i in pick) == k
            for n in range(len(sizes) + 1)
            for pick in itertools.combinations(range(len(sizes)), n)
        )
        if not seatable:
            continue  # these parties cannot make k v k (e.g. 2 + 2 + 2 for k = 3)
        pub = {p: float(rng.randint(0, 24)) for p in range(2 * k)}
        lobby = Lobby(
            {3: "SPI", 8: "SAL"}[k], tuple(range(2 * k)), tuple(u for u in units if len(u) > 1)
        )
        team_a, team_b = original_split(lobby, pub)
        ranks = sorted_power(SEPlayer(player_id(p), "A", pub[p]) for p in range(2 * k))
        power = [ranks[player_id(p)] for p in range(2 * k)]
        gap = abs(sum(power[p] for p in team_a) - sum(power[p] for p in team_b))
        best = min(
            abs(2 * sum(power[p] for i in pick for p in units[i]) - sum(power))
            for n in range(len(units) + 1)
            for pick in itertools.combinations(range(len(units)), n)
            if sum(sizes[i] for i in pick) == k
        )
        assert len(team_a) == len(team_b) == k and gap == best
        checked += 1
    assert checked >= 20


def test_win_chances_mean_and_sum() -> None:
    skill = [1.0, 0.0, -1.0, 0.5, 0.5]
    p = win_chances(skill, [0, 1], [2, 3, 4], c=2.0, k=3)
    # mean: ½ against 0 → σ(1); sum: 1 against 0 → σ(2/3 · 1)
    assert p["mean"] == pytest.approx(1 / (1 + math.exp(-1)))
    assert p["sum"] == pytest.approx(1 / (1 + math.exp(-2 / 3)))
    even = win_chances(skill, [0, 2, 3], [1, 4, 3], c=2.0, k=3)
    assert even["mean"] == pytest.approx(even["sum"])  # k v k: the two models agree


def test_metrics_on_a_hand_example() -> None:
    rows = [
        Assignment("community", "SAL", 8, 8, {"mean": 0.5, "sum": 0.5}, 0.0, 0.0),
        Assignment("community", "SAL", 3, 13, {"mean": 0.75, "sum": 0.6}, 2.0, -1.0),
        Assignment("community", "SAL", 10, 6, {"mean": 0.375, "sum": 0.25}, 1.0, 3.0),
    ]
    m = summarise(rows)
    assert m.lobbies == 3
    assert m.mean_edge["mean"] == pytest.approx((0 + 0.25 + 0.125) / 3)
    assert m.mean_edge["sum"] == pytest.approx((0 + 0.1 + 0.25) / 3)
    assert m.lopsided == {"mean": pytest.approx(1 / 3), "sum": pytest.approx(1 / 3)}
    # the larger team: B (13) wins with 0.25 and 0.4, A (10) with 0.375 and 0.25
    assert m.larger_wins["mean"] == pytest.approx((0.25 + 0.375) / 2)
    assert m.larger_wins["sum"] == pytest.approx((0.4 + 0.25) / 2)
    # δ*: (small − large) = (2 − (−1)) + (3 − 1) = 5 over gaps 10 + 4
    assert m.presence_to_even == pytest.approx(5 / 14)
    assert (m.mean_size_gap, m.max_size_gap, m.uneven, m.widest) == (
        pytest.approx(14 / 3),
        10,
        pytest.approx(2 / 3),
        (3, 13),
    )
    even = summarise(rows[:1])
    assert even.larger_wins == {"mean": None, "sum": None} and even.presence_to_even is None
    with pytest.raises(ValueError):
        summarise([])
