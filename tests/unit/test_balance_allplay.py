"""All-play splits (W12) against brute force over every choice of the smaller side."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import pytest

from synelo.balance import all_play_split, best_splits, place_joiner
from synelo.balance.allplay import Line, Logit
from synelo.models.whr import Whr
from synelo.ratings.whr import NATURAL, sigmoid

SIMPLE, BPST = Whr(), Whr({"epad": "bpst"})


def elos(rng: random.Random, n: int) -> list[int]:
    """Zero-K-like strengths: Elo around 1800, sd 400."""
    return [round(rng.gauss(1800, 400)) for _ in range(n)]


def simple_context(rng: random.Random) -> dict[str, Any]:
    """Random epads (natural units) for the simple variant's steps 1…15."""
    return {f"epad:{s}": {"mean": rng.uniform(-0.3, 0.8), "precision": 1.0} for s in range(1, 16)}


def bpst_context(rng: random.Random) -> dict[str, Any]:
    return {
        f"epad:{s}:{h}": {"mean": rng.uniform(-0.3, 0.8), "precision": 1.0}
        for s in range(1, 16)
        for h in ("low", "high")
    }


def of(model: Whr, context: dict[str, Any]) -> tuple[Logit, Line]:
    return (
        lambda a, b: model.split_logit(a, b, context),
        lambda x, y: model.split_line(x, y, context),
    )


def brute_force(
    ratings: Sequence[float],
    logit: Logit,
    parties: Sequence[Sequence[int]] = (),
) -> tuple[float, list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """The least |logit| over every ⌊n/2⌋-player side (parties whole), and the splits at it."""
    n = len(ratings)
    k = n // 2
    scored = []
    for small in itertools.combinations(range(n), k):
        large = tuple(i for i in range(n) if i not in small)
        if any(not (set(p) <= set(small) or set(p) <= set(large)) for p in parties):
            continue
        value = abs(logit([ratings[i] for i in small], [ratings[i] for i in large]))
        scored.append((value, (small, large)))
    least = min(v for v, _ in scored)
    return least, [s for v, s in scored if v <= least + 1e-12]


def check(split: Any, ratings: Sequence[float], logit: Logit) -> None:
    """A valid all-play split: everyone seated, ⌊n/2⌋ v ⌈n/2⌉, its logit and P its own."""
    n = len(ratings)
    assert sorted(split.a + split.b) == list(range(n)) and split.bench == ()
    assert sorted((len(split.a), len(split.b))) == [n // 2, n - n // 2] and split.k == n // 2
    value = logit([ratings[i] for i in split.a], [ratings[i] for i in split.b])
    assert split.logit == pytest.approx(value, abs=1e-12)
    assert split.p_a == pytest.approx(sigmoid(value), abs=1e-15)
    assert split.sum_a == sum(ratings[i] for i in split.a)
    assert split.gap == abs(split.sum_a - split.sum_b)


@pytest.mark.parametrize("seed", range(30))
def test_the_closest_sum_program_is_the_brute_force_optimum(seed: int) -> None:
    """The linear case (simple epad) with enumeration off: the program alone, proven."""
    rng = random.Random(seed)
    ratings = elos(rng, rng.randint(3, 13))
    logit, line = of(SIMPLE, simple_context(rng))
    (split,) = all_play_split(ratings, logit, line, enumerate_up_to=0).splits
    check(split, ratings, logit)
    least, _ = brute_force(ratings, logit)
    assert abs(split.logit) == pytest.approx(least, abs=1e-12)
    assert split.optimal and split.method == "exact"


@pytest.mark.parametrize("seed", range(20))
def test_an_arbitrary_line_moves_the_target(seed: int) -> None:
    """Any slope and offset, not whr's: logit = c·(mean_A − mean_B) ± b for the smaller side."""
    rng = random.Random(100 + seed)
    ratings = elos(rng, rng.randint(4, 12))
    c, b = rng.uniform(0.001, 0.02) * rng.choice((1, -1)), rng.uniform(-3, 3)

    def offset(size_a: int, size_b: int) -> float:
        return 0.0 if size_a == size_b else (b if size_a < size_b else -b)

    def logit(a: Sequence[float], s: Sequence[float]) -> float:
        return c * (sum(a) / len(a) - sum(s) / len(s)) + offset(len(a), len(s))

    def line(size_a: int, size_b: int) -> tuple[float, float]:
        return c, offset(size_a, size_b)

    (split,) = all_play_split(ratings, logit, line, enumerate_up_to=0).splits
    check(split, ratings, logit)
    assert abs(split.logit) == pytest.approx(brute_force(ratings, logit)[0], abs=1e-12)
    assert split.optimal


def test_seed_example_epad_zero_is_even_and_a_positive_epad_prefers_another_split() -> None:
    # Zero-K's balancer calls [2500, 1500] v [2000] fair: equal means. With no epad the
    # logit is 0 and that is the split; with an epad of 500 Elo for the larger side it is
    # −500 Elo for the lone 2000, and 2500 alone against 2000 + 1500 (+750 − 500) is better.
    ratings = [2500, 2000, 1500]
    assert SIMPLE.split_logit([2500, 1500], [2000], {}) == 0.0
    (even,) = all_play_split(ratings, *of(SIMPLE, {})).splits
    assert {even.a, even.b} == {(0, 2), (1,)} and even.logit == 0.0 and even.optimal
    context = {"epad:1": {"mean": 500 / NATURAL, "precision": 1.0}}
    logit, line = of(SIMPLE, context)
    for form in (line, None):  # the program, and every split scored (no line given)
        (split,) = all_play_split(ratings, logit, form).splits
        assert {split.a, split.b} == {(0,), (1, 2)}
        assert split.logit == pytest.approx(250 / NATURAL * (1 if split.a == (0,) else -1))
        assert abs(split.logit) < abs(logit([2000], [2500, 1500]))
        assert split.p_a == pytest.approx(sigmoid(split.logit))


@pytest.mark.parametrize("seed", range(15))
def test_bpst_few_choices_are_enumerated_and_proven(seed: int) -> None:
    rng = random.Random(200 + seed)
    ratings = elos(rng, 2 * rng.randint(1, 5) + 1)  # uneven teams: W7's epad is not linear
    logit, line = of(BPST, bpst_context(rng))
    assert line(len(ratings) // 2, len(ratings) - len(ratings) // 2) is None
    assert line(3, 3) is not None and line(3, 3)[1] == 0.0  # even teams: no epad at all
    (split,) = all_play_split(ratings, logit, line).splits
    check(split, ratings, logit)
    assert abs(split.logit) == pytest.approx(brute_force(ratings, logit)[0], abs=1e-12)
    assert split.optimal and split.method == "exact"


@pytest.mark.parametrize("seed", range(10))
def test_bpst_beyond_enumeration_searches_and_says_so(seed: int) -> None:
    rng = random.Random(300 + seed)
    ratings = elos(rng, 2 * rng.randint(4, 6) + 1)
    logit, line = of(BPST, bpst_context(rng))
    result = all_play_split(ratings, logit, line, enumerate_up_to=0)
    (split,) = result.splits
    check(split, ratings, logit)
    least = brute_force(ratings, logit)[0]
    assert abs(split.logit) >= least - 1e-12
    assert abs(split.logit) <= least + 0.05  # P within 1.25 percentage points
    assert not split.optimal and split.method == "greedy" and result.solver == "greedy"


@pytest.mark.parametrize("seed", range(12))
def test_parties_stay_together_and_preferences_are_exact(seed: int) -> None:
    rng = random.Random(400 + seed)
    n = rng.randint(5, 10)
    ratings = elos(rng, n)
    people = list(range(n))
    rng.shuffle(people)
    party = sorted(people[:2])
    at = rng.randint(1, n - 1)
    current = (people[:at], people[at:])
    logit, line = of(SIMPLE, simple_context(rng))
    least, best = brute_force(ratings, logit, [party])

    def moved(small: Sequence[int], large: Sequence[int]) -> int:
        now_a, now_b = set(current[0]), set(current[1])
        named = len(now_a - set(small)) + len(now_b - set(large))
        return min(named, len(now_a - set(large)) + len(now_b - set(small)))

    for prefer in ("stay", "mix"):
        (split,) = all_play_split(
            ratings, logit, line, parties=[party], current=current, prefer=prefer
        ).splits
        check(split, ratings, logit)
        assert set(party) <= set(split.a) or set(party) <= set(split.b)
        assert abs(split.logit) == pytest.approx(least, abs=1e-12) and split.optimal
        counts = [moved(s, t) for s, t in best]
        assert split.moved == (min(counts) if prefer == "stay" else max(counts))
        assert split.moved_optimal is True
        assert split.moved == moved(split.a, split.b)


def test_past_enumeration_the_program_still_proves_the_logit_not_the_preference() -> None:
    rng = random.Random(41)
    ratings = elos(rng, 11)
    logit, line = of(SIMPLE, simple_context(rng))
    current = ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9, 10])
    (split,) = all_play_split(
        ratings, logit, line, current=current, prefer="stay", enumerate_up_to=0
    ).splits
    check(split, ratings, logit)
    assert abs(split.logit) == pytest.approx(brute_force(ratings, logit)[0], abs=1e-12)
    assert split.optimal and split.moved_optimal is False
    named = len(set(current[0]) - set(split.a)) + len(set(current[1]) - set(split.b))
    assert split.moved == named  # the naming that moves fewer is the one given
    renamed = len(set(current[0]) - set(split.b)) + len(set(current[1]) - set(split.a))
    assert named <= renamed


def test_a_party_that_cannot_fit_is_split_and_reported() -> None:
    ratings = [2000, 1900, 1800, 1700, 1600]  # 2 v 3: a party of four fits nowhere
    logit, line = of(SIMPLE, {})
    (split,) = all_play_split(ratings, logit, line, parties=[[0, 1, 2, 3]]).splits
    assert split.split_parties == ((0, 1, 2, 3),)
    # three fit on the larger side
    (split,) = all_play_split(ratings, logit, line, parties=[[0, 1, 2]]).splits
    assert split.split_parties == () and ({0, 1, 2} <= set(split.a) or {0, 1, 2} <= set(split.b))
    # 6 players, 3 v 3, parties of two: no choice of them seats exactly 3, the largest splits
    (split,) = all_play_split([1000] * 6, logit, line, parties=[[0, 1], [2, 3], [4, 5]]).splits
    assert split.split_parties == ((0, 1),)


@pytest.mark.parametrize("seed", range(5))
def test_even_counts_are_equal_sums_like_f7(seed: int) -> None:
    rng = random.Random(500 + seed)
    ratings = elos(rng, 2 * rng.randint(2, 6))
    logit, line = of(SIMPLE, simple_context(rng))  # no epad between equal sizes
    (split,) = all_play_split(ratings, logit, line, enumerate_up_to=0).splits
    even = best_splits(ratings, theta=1, min_k=len(ratings) // 2).splits[0]
    assert split.gap == even.gap


def test_without_the_program_only_the_search_runs() -> None:
    rng = random.Random(7)
    ratings = elos(rng, 15)
    logit, line = of(SIMPLE, simple_context(rng))
    result = all_play_split(ratings, logit, line, exact=False)
    (split,) = result.splits
    check(split, ratings, logit)
    assert not split.optimal and result.solver == "greedy"
    assert all_play_split(ratings, logit, line, budget_s=0.0).splits[0].method == "greedy"


def test_bad_arguments_raise() -> None:
    logit, line = of(SIMPLE, {})
    with pytest.raises(ValueError, match="at least 2"):
        all_play_split([1500], logit, line)
    with pytest.raises(ValueError, match="parties overlap"):
        all_play_split([1500] * 4, logit, line, parties=[[0, 1], [1, 2]])


def test_the_joiner_goes_where_the_logit_is_least() -> None:
    # A 1800 + 1800 (3600) v B 2000 + 1500 (3500), a 1200 joiner. By sums: B (|100 − 1200|
    # = 1100 against 1300). By means with no epad: A (1600 v 1750, −150 Elo, against 1800 v
    # 1566.7, +233). With 200 Elo for the larger side: B again (|+50| against |+33.3|).
    ratings = [1800, 1800, 2000, 1500, 1200]
    assert place_joiner(ratings, [0, 1], [2, 3], 4) == "B"
    assert place_joiner(ratings, [0, 1], [2, 3], 4, logit=of(SIMPLE, {})[0]) == "A"
    epad = {"epad:2": {"mean": 200 / NATURAL, "precision": 1.0}}
    assert place_joiner(ratings, [0, 1], [2, 3], 4, logit=of(SIMPLE, epad)[0]) == "B"
    # unequal teams: the smaller, whatever the logit
    assert place_joiner(ratings, [0, 1, 2], [3], 4, logit=of(SIMPLE, {})[0]) == "B"
