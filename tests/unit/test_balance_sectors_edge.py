"""Seed 002's Sector's Edge autobalancer, driven by events as the game side would."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from synelo.balance import (
    MatchState,
    SectorsEdgePolicy,
    SEMove,
    SEPlayer,
    community_assign,
    community_power,
    party_multiplier,
)
from synelo.balance.sectors_edge import Team, player_power, sorted_points_power, sorted_power


def roster(*players: SEPlayer) -> dict[str, SEPlayer]:
    return {p.id: p for p in players}


def test_sorted_power_ranks_from_five() -> None:
    ps = [SEPlayer("a", "A", 3.0), SEPlayer("b", "A", 10.0), SEPlayer("c", "B", 1.0)]
    assert sorted_power(ps) == {"c": 5, "a": 6, "b": 7}


def test_sorted_power_breaks_ties_by_id_whatever_the_order() -> None:
    # Equal pubPower: ranked by id ascending, so the answer does not depend on input order.
    ps = [SEPlayer("b", "A", 2.0), SEPlayer("c", "B", 2.0), SEPlayer("a", "B", 2.0)]
    expected = {"a": 5, "b": 6, "c": 7}
    assert sorted_power(ps) == expected
    assert sorted_power(reversed(ps)) == expected
    # The same for points in sortedPointsPower (visible once the players have points).
    pts = [SEPlayer("y", "A", 0, points=3), SEPlayer("x", "B", 0, points=3)]
    assert sorted_points_power(pts) == {"x": 5, "y": 6}
    assert sorted_points_power(reversed(pts)) == {"x": 5, "y": 6}


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
    # Sizes within 1: the seed lists them as never unbalanced. That exemption now covers only
    # the size rules (the size-exemption decision): 4 v 3 with A ranked above B has power
    # A = 6.5+7+7.5+8 = 29, B = 5+5.5+6 = 16.5 (v1.2.2, nobody on points), 12.5 ≥ 10, so it
    # is unbalanced by power. Only the literal reading (`size_exemption="all"`) exempts it.
    four_v_three = roster(
        *(SEPlayer(f"a{i}", "A", 100 + i) for i in range(4)),
        *(SEPlayer(f"b{i}", "B", i) for i in range(3)),
    )
    assert policy.unbalanced(four_v_three, MatchState())
    assert not SectorsEdgePolicy(size_exemption="all").unbalanced(four_v_three, MatchState())


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


# -- the size-exemption decision ---------------------------------------------------------------


def stomp(n_a: int, n_b: int) -> dict[str, SEPlayer]:
    """A ranked above B by pubPower, A's players on points and B's on none (A is stomping)."""
    return roster(
        *(SEPlayer(f"a{i}", "A", 100 + i, points=10 * (i + 1)) for i in range(n_a)),
        *(SEPlayer(f"b{i}", "B", i) for i in range(n_b)),
    )


def test_power_rule_fires_on_even_teams_by_default() -> None:
    # 4 v 4, v1.2.2: sortedPower A 9…12, B 5…8; sortedPointsPower A 5…8, B 5 each.
    # A = 7+8+9+10 = 34, B = 5+5.5+6+6.5 = 23: 11 ≥ 10. The seed's literal "size difference
    # ≤ 1" would hide this; the decision exempts only the size rules.
    players, match = stomp(4, 4), MatchState()
    policy = SectorsEdgePolicy()
    assert policy.team_power(players) == {"A": 34.0, "B": 23.0}
    assert policy.check(players, match, now=0.0) and policy.overpowered == "A"
    # After the delay a0 (bottom two of A's four by points) moves: B 23+7 = 30 ≤ 34−7+10.
    assert policy.on_death("a0", players, match, now=20.0) == SEMove("a0", "A", "B")
    # Evenly mixed teams of the same sizes stay balanced.
    mixed = roster(
        *(replace(p, team="B" if i % 2 else "A") for i, p in enumerate(players.values()))
    )
    assert not policy.unbalanced(mixed, match)


def test_literal_size_exemption_never_fires_within_one() -> None:
    literal, default = SectorsEdgePolicy(size_exemption="all"), SectorsEdgePolicy()
    for n in range(1, 9):
        for n_a, n_b in ((n, n), (n + 1, n), (n, n + 1)):
            players = stomp(n_a, n_b)
            assert not literal.unbalanced(players, MatchState())
            assert not literal.check(players, MatchState(), now=0.0)
            assert literal.on_death("a0", players, MatchState(), now=100.0) is None
    # The same rosters do fire under the default once the gap is large enough.
    assert default.unbalanced(stomp(4, 4), MatchState())
    assert default.unbalanced(stomp(5, 4), MatchState())
    # Beyond a difference of 1 both readings agree (here the size rule 4+ v ≤2).
    assert literal.unbalanced(stomp(4, 2), MatchState())


def test_size_exemption_is_checked() -> None:
    with pytest.raises(ValueError, match="size_exemption"):
        SectorsEdgePolicy(size_exemption="none")  # type: ignore[arg-type]


# -- the community proposal -------------------------------------------------------------------


def test_community_power_is_the_lower_of_mean_and_median() -> None:
    assert community_power([4.0]) == 4.0
    assert community_power([1.0, 2.0, 3.0]) == 2.0
    # The proposal's examples. 7 in three games, 1 in seventeen: mean 38/20 = 1.9 (the
    # proposal writes 3.4, a slip), median 1 → 1.
    assert community_power([7.0] * 3 + [1.0] * 17) == 1.0
    # 7 in seventeen, 1 in three: mean 6.1, median 7 → 6.1.
    assert community_power([7.0] * 17 + [1.0] * 3) == pytest.approx(6.1)
    with pytest.raises(ValueError):
        community_power([])


def test_party_multiplier() -> None:
    assert [party_multiplier(n) for n in (1, 2, 3, 4, 5, 12)] == [1.0, 1.15, 1.20, 1.25, 1.25, 1.25]
    with pytest.raises(ValueError):
        party_multiplier(0)


def team_totals(
    weights: Mapping[str, float], parties: Sequence[Sequence[str]], teams: Mapping[str, Team]
) -> dict[Team, tuple[float, int]]:
    """(total weight with party multipliers, player count) of each team."""
    factor = {m: party_multiplier(len(p)) for p in parties for m in p}
    out: dict[Team, tuple[float, int]] = {"A": (0.0, 0), "B": (0.0, 0)}
    for player, team in teams.items():
        total, count = out[team]
        out[team] = (total + weights[player] * factor.get(player, 1.0), count + 1)
    return out


def test_example_two_superteam_reproduces() -> None:
    # Party 11, 11, 10: 32 × 1.20 = 38.4 on A; the twelve others sum to 32.0, never reach
    # 38.4, so all go to B: 3 v 12, as the proposal says.
    lone = [5, 5, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1]
    weights = {"p1": 11.0, "p2": 11.0, "p3": 10.0} | {
        f"l{i:02}": float(w) for i, w in enumerate(lone)
    }
    parties = [["p1", "p2", "p3"]]
    teams = community_assign(weights, parties)
    assert {p for p, t in teams.items() if t == "A"} == {"p1", "p2", "p3"}
    totals = team_totals(weights, parties, teams)
    assert totals["A"][0] == pytest.approx(38.4) and totals["A"][1] == 3
    assert totals["B"] == (32.0, 12)
    # The latecomer (the lightest, placed last) goes to B, as in the proposal.
    assert community_assign(weights | {"late": 0.5}, parties)["late"] == "B"


def test_example_one_with_the_arithmetic_corrected() -> None:
    # The proposal writes the party 7 + 6 + 5.5 = 18.5 times 1.20 as 22.5; it is 22.2. With
    # 22.2 on A: 5.5, 5, 5, 5, 5 → B (25.5); 3, 2 → A (27.2); 2 → B (27.5); 1.5 → A (28.7);
    # 0.5, 0.5, 0.5 → B (29.0). No ties arise after the first placement. The proposal ends
    # 29.0 v 29.0 with 8 v 7 players; corrected it is 28.7 (6 players) v 29.0 (9 players).
    weights = {
        "p7": 7.0, "p6": 6.0, "p55": 5.5,  # the party
        "l55": 5.5, "l5a": 5.0, "l5b": 5.0, "l5c": 5.0, "l5d": 5.0,
        "l3": 3.0, "l2a": 2.0, "l2b": 2.0, "l15": 1.5,
        "l05a": 0.5, "l05b": 0.5, "l05c": 0.5,
    }  # fmt: skip
    parties = [["p7", "p6", "p55"]]
    teams = community_assign(weights, parties)
    on_a = {p for p, t in teams.items() if t == "A"}
    assert on_a == {"p7", "p6", "p55", "l3", "l2a", "l15"}
    totals = team_totals(weights, parties, teams)
    assert totals["A"][0] == pytest.approx(28.7) and totals["A"][1] == 6
    assert totals["B"] == (29.0, 9)
    # A latecomer goes to the lighter A (the proposal also sends it to A, from a tie).
    assert community_assign(weights | {"late": 0.5}, parties)["late"] == "A"


def test_example_one_as_written_meets_our_tie_rule() -> None:
    # With the party at the proposal's 22.5 (members summing to 18.75), the totals tie at
    # 25.5 (A 4 players, B 5), 27.5 (A 5, B 6) and 29.0 at the end. The proposal gives the
    # first tie to A, the second to B and the latecomer's tie to A (8 v 7): no one rule does
    # that. Ours (fewer players, then A) gives A, A, and ends 29.0 v 29.0 with 6 v 9.
    weights = {
        "p7": 7.0, "p6": 6.25, "p55": 5.5,
        "l55": 5.5, "l5a": 5.0, "l5b": 5.0, "l5c": 5.0, "l5d": 5.0,
        "l3": 3.0, "l2a": 2.0, "l2b": 2.0, "l15": 1.5,
        "l05a": 0.5, "l05b": 0.5, "l05c": 0.5,
    }  # fmt: skip
    parties = [["p7", "p6", "p55"]]
    teams = community_assign(weights, parties)
    assert {p for p, t in teams.items() if t == "A"} == {"p7", "p6", "p55", "l3", "l2a", "l15"}
    totals = team_totals(weights, parties, teams)
    assert totals["A"][0] == pytest.approx(29.0) and totals["A"][1] == 6
    assert totals["B"] == (29.0, 9)
    assert community_assign(weights | {"late": 0.5}, parties)["late"] == "A"  # tie, A fewer


def test_community_tie_rule() -> None:
    # Equal totals go to the team with fewer players: party p+q (2 × 1.15 = 2.3) on A, r 2.3
    # on B; s meets 2.3 v 2.3 with A 2 players, B 1 → B.
    teams = community_assign({"p": 1.0, "q": 1.0, "r": 2.3, "s": 1.0}, [["p", "q"]])
    assert teams == {"p": "A", "q": "A", "r": "B", "s": "B"}
    # Equal totals and sizes go to A; equal weights are taken by id.
    assert community_assign({"y": 1.0, "x": 1.0}) == {"x": "A", "y": "B"}
    # Team size is otherwise ignored: lower total wins even with many more players.
    assert community_assign({"big": 10.0, "a": 1.0, "b": 1.0, "c": 1.0}) == {
        "big": "A", "a": "B", "b": "B", "c": "B"
    }  # fmt: skip


def test_community_parties_go_first_heaviest_first() -> None:
    # Parties are placed before any lone player, however heavy, and the heavier party first:
    # b1-b3 (4 × 1.20 = 4.8) on A, then a1-a2 (4 × 1.15 = 4.6) on B, then the lone 9 on the
    # lighter B. (Placed by weight alone, the 9 would have gone first, to A.)
    weights = {"a1": 2.0, "a2": 2.0, "b1": 4.0 / 3, "b2": 4.0 / 3, "b3": 4.0 / 3, "solo": 9.0}
    teams = community_assign(weights, [["a1", "a2"], ["b1", "b2", "b3"]])
    assert teams == {"b1": "A", "b2": "A", "b3": "A", "a1": "B", "a2": "B", "solo": "B"}
    # A party of one is a lone player.
    assert community_assign({"x": 1.0, "y": 5.0}, [["x"]]) == {"y": "A", "x": "B"}


def test_community_assign_rejects_bad_parties() -> None:
    with pytest.raises(ValueError, match="at least one"):
        community_assign({"a": 1.0}, [[]])
    with pytest.raises(ValueError, match="more than one party"):
        community_assign({"a": 1.0, "b": 1.0}, [["a", "b"], ["a"]])
    with pytest.raises(ValueError, match="no weight"):
        community_assign({"a": 1.0}, [["a", "ghost"]])


@st.composite
def pools(draw: st.DrawFn) -> tuple[dict[str, float], list[list[str]]]:
    n = draw(st.integers(0, 16))
    ids = [f"p{i}" for i in range(n)]
    weight = st.floats(0, 100, allow_nan=False, allow_infinity=False)
    weights = {p: draw(weight) for p in ids}
    # Cut a shuffled prefix of the players into parties of 1 to 5.
    order = draw(st.permutations(ids))
    in_parties = draw(st.integers(0, n))
    parties: list[list[str]] = []
    i = 0
    while i < in_parties:
        size = draw(st.integers(1, 5))
        parties.append(list(order[i : i + size]))
        i += size
    return weights, parties


@given(pools())
def test_community_assign_places_everyone_once_and_keeps_parties_together(
    pool: tuple[dict[str, float], list[list[str]]],
) -> None:
    weights, parties = pool
    teams = community_assign(weights, parties)
    assert sorted(teams) == sorted(weights)  # every player exactly once, no one else
    for party in parties:
        assert len({teams[m] for m in party}) == 1
    # Greedy to the lighter team keeps the final gap within the heaviest unit placed.
    units = [party_multiplier(len(p)) * sum(weights[m] for m in p) for p in parties]
    grouped = {m for p in parties for m in p}
    units += [w for p, w in weights.items() if p not in grouped]
    totals = team_totals(weights, parties, teams)
    gap = abs(totals["A"][0] - totals["B"][0])
    assert gap <= max(units, default=0.0) + 1e-6
