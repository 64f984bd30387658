"""Seed 002's Sector's Edge autobalancer, driven by events as the game side would."""

from __future__ import annotations

from dataclasses import replace

from synelo.balance import MatchState, SectorsEdgePolicy, SEMove, SEPlayer
from synelo.balance.sectors_edge import player_power, sorted_points_power, sorted_power


def roster(*players: SEPlayer) -> dict[str, SEPlayer]:
    return {p.id: p for p in players}


def test_sorted_power_ranks_from_five() -> None:
    ps = [SEPlayer("a", "A", 3.0), SEPlayer("b", "A", 10.0), SEPlayer("c", "B", 1.0)]
    assert sorted_power(ps) == {"c": 5, "a": 6, "b": 7}


def test_sorted_points_power_gives_zero_point_players_five() -> None:
    # Seed erratum: its snippet increments `sortedPointsPower` where it means `currentPower`;
    # the text says everyone on 0 points gets 5 and the rest count up from there.
    ps = [
        SEPlayer("a", "A", 0, points=0),
        SEPlayer("b", "A", 0, points=0),
        SEPlayer("c", "B", 0, points=40),
        SEPlayer("d", "B", 0, points=10),
    ]
    assert sorted_points_power(ps) == {"a": 5, "b": 5, "d": 5, "c": 6}


def test_v122_power_is_the_mean_of_both_ranks() -> None:
    ps = [SEPlayer("a", "A", 3.0, points=0), SEPlayer("b", "B", 10.0, points=5)]
    # sortedPower a 5, b 6; sortedPointsPower a 5, b 5 → means 5.0 and 5.5
    assert player_power(ps) == {"a": 5.0, "b": 5.5}
    assert player_power(ps, "1.2.1") == {"a": 5.0, "b": 6.0}


def test_never_unbalanced_conditions() -> None:
    policy = SectorsEdgePolicy()
    three_v_zero = roster(*(SEPlayer(f"a{i}", "A", i) for i in range(3)))
    assert policy.unbalanced(three_v_zero, MatchState())
    for match in (
        MatchState(sandbox=True),
        MatchState(tournament=True),
        MatchState(ffa=True),
        MatchState(seconds_left=179),
    ):
        assert not policy.unbalanced(three_v_zero, match)
    # Sizes within 1 are never unbalanced, whatever the power.
    four_v_three = roster(
        *(SEPlayer(f"a{i}", "A", 100 + i) for i in range(4)),
        *(SEPlayer(f"b{i}", "B", i) for i in range(3)),
    )
    assert not policy.unbalanced(four_v_three, MatchState())


def test_size_patterns_and_power() -> None:
    policy = SectorsEdgePolicy(version="1.2.1")
    match = MatchState()

    def teams(n_a: int, n_b: int, strong: str = "A") -> dict[str, SEPlayer]:
        a = [SEPlayer(f"a{i}", "A", (100 if strong == "A" else 0) + i) for i in range(n_a)]
        b = [SEPlayer(f"b{i}", "B", (100 if strong == "B" else 0) + i) for i in range(n_b)]
        return roster(*a, *b)

    assert policy.unbalanced(teams(2, 0), match)
    assert policy.unbalanced(teams(3, 1), match)
    assert policy.unbalanced(teams(4, 2), match)
    # 5 v 3 is none of the patterns: it is unbalanced only by power. With A's players ranked
    # above B's: A = 8+9+10+11+12 = 50, B = 5+6+7 = 18 → 32 ≥ 10.
    assert policy.unbalanced(teams(5, 3), match)
    # Stronger B: A = 5+…+9 = 35, B = 10+11+12 = 33 → 2 < 10: not unbalanced.
    assert not policy.unbalanced(teams(5, 3, strong="B"), match)


def test_moves_after_the_delay_eligible_players_without_overshoot() -> None:
    policy = SectorsEdgePolicy(version="1.2.1")
    match = MatchState()
    # A: six players ranked 6…11 by pubPower, B: two ranked 5 and 12.
    players = roster(
        *(SEPlayer(f"a{i}", "A", 10 + i, points=10 * i) for i in range(6)),
        SEPlayer("b0", "B", 0),
        SEPlayer("b1", "B", 100),
    )
    assert policy.check(players, match, now=0.0)
    assert policy.overpowered == "A"
    # Before 20 s nobody moves.
    assert policy.on_death("a0", players, match, now=19.0) is None
    # After: a0 is in the bottom two-thirds by points (int(6·0.67) = 4: a0…a3) → moves.
    assert policy.on_death("a0", players, match, now=20.0) == SEMove("a0", "A", "B")
    # a5 has the most points: not eligible.
    assert policy.on_death("a5", players, match, now=25.0) is None
    # A player of the weaker team never moves.
    assert policy.on_death("b0", players, match, now=25.0) is None


def test_party_members_and_the_p_q_slip() -> None:
    # Seed erratum: the teammates counted for "bottom two-thirds" exclude those in a party
    # (the seed's code tests the dying player's flag, p.InParty, for every teammate q).
    policy = SectorsEdgePolicy(version="1.2.1")
    players = roster(
        SEPlayer("low", "A", 1, points=0, in_party=True),
        SEPlayer("mid", "A", 2, points=5, in_party=True),
        SEPlayer("x", "A", 3, points=10),
        SEPlayer("y", "A", 4, points=20),
        SEPlayer("z", "A", 5, points=30),
        SEPlayer("b", "B", 0),
    )
    # Eligible teammates: x, y, z (parties excluded); int(3·0.67) = 2 → x and y.
    assert policy.eligible(players["x"], players)
    assert policy.eligible(players["y"], players)
    assert not policy.eligible(players["z"], players)
    assert not policy.eligible(players["low"], players)  # in a party
    moved = replace(players["x"], autobalanced=True)
    assert not policy.eligible(
        moved, roster(*(moved if p.id == "x" else p for p in players.values()))
    )


def test_a_move_that_would_overshoot_is_refused() -> None:
    # With the +5 of sortedPower, a size imbalance always leaves the larger team ahead by more
    # than one move can undo at a 10-point allowance, so the rule is shown with allowance 0.
    # v1.2.1 ranks: A holds 5, 6, 7, 10 (28), B holds 8, 9 (17): 4 v 2 is unbalanced.
    policy = SectorsEdgePolicy(version="1.2.1", power_gap=0)
    players = roster(
        SEPlayer("p5", "A", 1, points=0),
        SEPlayer("p10", "A", 6, points=1),
        SEPlayer("p6", "A", 2, points=50),
        SEPlayer("p7", "A", 3, points=60),
        SEPlayer("b8", "B", 4),
        SEPlayer("b9", "B", 5),
    )
    assert policy.check(players, MatchState(), now=0) and policy.overpowered == "A"
    # p10 is eligible (bottom 2 of 4 by points) but moving it gives B 27 > A 18 + 0: refused.
    assert policy.eligible(players["p10"], players)
    assert policy.on_death("p10", players, MatchState(), now=30) is None
    # p5: B 22, A 23 → allowed.
    assert policy.on_death("p5", players, MatchState(), now=30) == SEMove("p5", "A", "B")


def test_the_mark_clears_when_the_teams_even_out() -> None:
    policy = SectorsEdgePolicy()
    players = roster(*(SEPlayer(f"a{i}", "A", i) for i in range(3)))
    assert policy.check(players, MatchState(), now=5.0)
    assert policy.marked_at == 5.0
    even = roster(SEPlayer("a0", "A", 0), SEPlayer("a1", "B", 1), SEPlayer("a2", "A", 2))
    assert not policy.check(even, MatchState(), now=6.0)
    assert policy.marked_at is None and policy.overpowered is None
