"""The answer to a splits request, written with orjson: it must say exactly what the documented
model, `SplitsOut`, says, whatever numeric types the solver or a model's prediction hand it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from synelo.balance import best_splits
from synelo.balance.solver import Split
from synelo.schemas import SplitOut, SplitsOut
from synelo.service.api.balancing import splits_json

KEYS = [str(76561197960265730 + i) for i in range(12)]
RATINGS = [1000 + (37 * i) % 400 for i in range(12)]


def documented(mode: str, solver: str, splits: tuple[Split, ...], elapsed_ms: float) -> bytes:
    """The answer as the pydantic models write it (what the route answered before orjson)."""
    return (
        SplitsOut(
            mode=mode,  # type: ignore[arg-type]
            solver=solver,  # type: ignore[arg-type]
            elapsed_ms=elapsed_ms,
            splits=[
                SplitOut(
                    k=s.k,
                    A=[KEYS[i] for i in s.a],
                    B=[KEYS[i] for i in s.b],
                    bench=[KEYS[i] for i in s.bench],
                    sum_a=int(s.sum_a),
                    sum_b=int(s.sum_b),
                    gap=int(s.gap),
                    p_a=s.p_a,
                    optimal=s.optimal,
                    moved=s.moved,
                    moved_optimal=s.moved_optimal,
                    split_parties=[[KEYS[i] for i in p] for p in s.split_parties],
                    logit=s.logit,
                )
                for s in splits
            ],
        )
        .model_dump_json()
        .encode()
    )


def test_every_team_size_with_present_teams_and_parties() -> None:
    """Moves, their proof and a split party are all filled in."""
    found = best_splits(
        RATINGS,
        theta=400,
        current=([0, 1, 2, 3, 4], [5, 6, 7, 8, 9]),
        parties=[[0, 6, 7, 8, 9, 10, 11], [1, 2]],
        prefer="mix",
    )
    assert any(s.split_parties for s in found.splits)
    assert all(s.moved is not None for s in found.splits)
    answer = splits_json("even", found.solver, found.splits, KEYS, 12.345)
    assert answer == documented("even", found.solver, found.splits, 12.345)


@pytest.mark.parametrize("p_a", [0.1, 1 / 3, 2**-1074, 1 - 2**-53, float("nan")])
def test_numpy_scalars_and_awkward_floats(p_a: float) -> None:
    """A model's prediction may be a numpy scalar (orjson refuses those) and a logit or a
    probability any double; both writers agree on each."""
    split = best_splits(RATINGS, theta=400, min_k=6).splits[0]
    odd = replace(
        split,
        k=np.int64(split.k),
        sum_a=np.float64(split.sum_a),
        p_a=np.float64(p_a),
        optimal=np.bool_(split.optimal),
        moved=np.int64(3),
        moved_optimal=np.bool_(False),
        logit=np.float64(-p_a),
    )
    answer = splits_json("all-play", "greedy", (odd,), KEYS, 0.5)
    assert answer == documented("all-play", "greedy", (odd,), 0.5)
