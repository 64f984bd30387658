"""All-play splits by F1's sums (W12 for a model without a logit) against brute force."""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Sequence

import pytest

from synelo.balance import best_splits, place_joiner
from synelo.balance.allplay import all_play_by_sums
from synelo.balance.solver import Split
from synelo.ratings.synelo import win_probability

THETA = 2400


def elos(rng: random.Random, n: int, sd: float = 400) -> list[int]:
    return [round(rng.gauss(1500, sd)) for _ in range(n)]


def brute_force(
    ratings: Sequence[int], parties: Sequence[Sequence[int]] = ()
) -> tuple[int, list[tuple[set[int], set[int]]]]:
    """The least |Σ_A − Σ_B| over every ⌊n/2⌋-player side (parties whole), and its splits."""
    n = len(ratings)
    scored = []
    for small in itertools.combinations(range(n), n // 2):
        large = set(range(n)) - set(small)
        if any(not (set(p) <= set(small) or set(p) <= large) for p in parties):
            continue
        gap = abs(sum(ratings[i] for i in small) - sum(ratings[i] for i in large))
        scored.append((gap, (set(small), large)))
    least = min(g for g, _ in scored)
    return least, [s for g, s in scored if g == least]


def check(split: Split, ratings: Sequence[int]) -> None:
    """Everyone seated, ⌊n/2⌋ v ⌈n/2⌉, k = ⌊n/2⌋, F1's sums and P, no logit."""
    n = len(ratings)
    assert sorted(split.a + split.b) == list(range(n)) and split.bench == ()
    assert sorted((len(split.a), len(split.b))) == [n // 2, n - n // 2] and split.k == n // 2
    assert split.sum_a == sum(ratings[i] for i in split.a)
    assert split.sum_b == sum(ratings[i] for i in split.b)
    assert split.gap == abs(split.sum_a - split.sum_b)
    assert split.p_a == win_probability(split.sum_a, split.sum_b, THETA)
    assert split.logit is None


def moved(current: tuple[list[int], list[int]], a: Sequence[int], b: Sequence[int]) -> int:
    now_a, now_b = set(current[0]), set(current[1])
    named = len(now_a - set(a)) + len(now_b - set(b))
    return min(named, len(now_a - set(b)) + len(now_b - set(a)))


@pytest.mark.parametrize("seed", range(60))
def test_the_least_gap_is_the_brute_force_optimum(seed: int) -> None:
    """Odd and even n from 2 to 15, ratings close and far apart, some below 0."""
    rng = random.Random(seed)
    n = 2 + seed % 14
    ratings = elos(rng, n, sd=rng.choice((30, 400, 3000)))
    result = all_play_by_sums(ratings, theta=THETA)
    (split,) = result.splits
    check(split, ratings)
    assert split.gap == brute_force(ratings)[0]
    assert split.optimal and result.solver == "exact" and split.moved is None
    strongest = min(range(n), key=lambda i: (-ratings[i], i))
    assert strongest in split.a  # without present teams A holds the strongest player


@pytest.mark.parametrize("seed", range(40))
def test_parties_stay_together_and_preferences_are_exact(seed: int) -> None:
    rng = random.Random(1000 + seed)
    n = rng.randint(5, 13)
    ratings = elos(rng, n)
    people = list(range(n))
    rng.shuffle(people)
    parties = [sorted(people[:2])] + ([sorted(people[2:5])] if n >= 8 else [])
    at = rng.randint(1, n - 1)
    current = (people[:at], people[at:])
    least, best = brute_force(ratings, parties)
    for prefer in ("stay", "mix"):
        (split,) = all_play_by_sums(
            ratings, theta=THETA, parties=parties, current=current, prefer=prefer
        ).splits
        check(split, ratings)
        for party in parties:
            assert set(party) <= set(split.a) or set(party) <= set(split.b)
        assert split.split_parties == ()
        assert split.gap == least and split.optimal
        counts = [moved(current, a, b) for a, b in best]
        assert split.moved == (min(counts) if prefer == "stay" else max(counts))
        assert split.moved == moved(current, split.a, split.b)
        assert split.moved_optimal is True  # up to 13 players (14 units): settled exactly


def test_a_party_too_large_for_either_side_is_split() -> None:
    ratings = [2000, 1900, 1800, 1700, 1600]  # 2 v 3: a party of four fits nowhere
    (split,) = all_play_by_sums(ratings, theta=THETA, parties=[[0, 1, 2, 3]]).splits
    check(split, ratings)
    assert split.split_parties == ((0, 1, 2, 3),) and split.gap == brute_force(ratings)[0]
    # three fit on the larger side only: 2000 + 1900 + 1800 v 1700 + 1600
    (split,) = all_play_by_sums(ratings, theta=THETA, parties=[[0, 1, 2]]).splits
    assert split.split_parties == () and (split.a, split.b) == ((0, 1, 2), (3, 4))


def test_odd_counts_follow_the_odd_joiner_rule() -> None:
    """The whole split's rule is the odd joiner's: from the best 2 v 2, a joiner placed by
    place_joiner can never beat the all-play split of the five."""
    rng = random.Random(5)
    for _ in range(50):
        ratings = elos(rng, 5)
        (split,) = all_play_by_sums(ratings, theta=THETA).splits
        even = best_splits(ratings[:4], theta=THETA, min_k=2).splits[0]
        side = place_joiner(ratings, list(even.a), list(even.b), 4)
        a, b = [*even.a, *([4] if side == "A" else [])], [*even.b, *([4] if side == "B" else [])]
        assert split.gap <= abs(sum(ratings[i] for i in a) - sum(ratings[i] for i in b))


def test_even_counts_are_f7_with_everyone_seated() -> None:
    rng = random.Random(8)
    for n in range(4, 33, 2):
        ratings = elos(rng, n)
        (split,) = all_play_by_sums(ratings, theta=THETA).splits
        (f7,) = best_splits(ratings, theta=THETA, min_k=n // 2, must_play=range(n)).splits
        assert (split.a, split.b, split.gap) == (f7.a, f7.b, f7.gap)


def test_all_below_zero_still_names_a_for_the_strongest() -> None:
    """The phantom of an odd count weighs 0, more than anyone here."""
    ratings = [-10, -20, -30, -40, -50]
    (split,) = all_play_by_sums(ratings, theta=THETA).splits
    check(split, ratings)
    assert 0 in split.a and split.gap == brute_force(ratings)[0] == 10


@pytest.mark.parametrize("n", [100, 101])
def test_a_full_server_is_proven_within_the_budget(n: int) -> None:
    rng = random.Random(n)
    for _ in range(3):
        ratings = elos(rng, n)
        parties = [[3 * i, 3 * i + 1, 3 * i + 2] for i in range(8)] + [[40, 41]]
        current = (list(range(0, n, 2)), list(range(1, n, 2)))
        began = time.perf_counter()
        result = all_play_by_sums(
            ratings, theta=THETA, parties=parties, current=current, prefer="stay", budget_s=1.0
        )
        elapsed = time.perf_counter() - began
        (split,) = result.splits
        check(split, ratings)
        assert split.gap == sum(ratings) % 2  # the parity bound: nothing can be less
        assert split.optimal and result.solver == "exact"
        assert elapsed < 1.0 and result.elapsed_ms < 1000


def test_without_time_only_the_greedy_runs_and_says_so() -> None:
    rng = random.Random(3)
    ratings = [2**i + rng.randrange(7) for i in range(22)]  # far apart: the bound is not met
    result = all_play_by_sums(ratings, theta=THETA, budget_s=0.0)
    (split,) = result.splits
    check(split, ratings)
    assert split.method == "greedy" and not split.optimal and result.solver == "greedy"
    assert split.gap > sum(ratings) % 2
    assert all_play_by_sums(ratings, theta=THETA).splits[0].optimal


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        all_play_by_sums([1500], theta=THETA)
    with pytest.raises(ValueError, match="parties overlap"):
        all_play_by_sums([1500] * 5, theta=THETA, parties=[[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="not in the pool"):
        all_play_by_sums([1500] * 5, theta=THETA, parties=[[0, 5]])
