"""The simulated world's truth: the world's own scale, and throwers who lose on purpose."""

from __future__ import annotations

import math

import numpy as np

from synelo.sim.world import SimPlayer, World


def world(players: list[SimPlayer], throw_from: int = 0) -> World:
    return World(
        players=players,
        servers=[],
        theta=800.0,
        rng=np.random.default_rng(1),
        throw_from=throw_from,
    )


def test_true_p_is_f1_on_true_skills_at_the_worlds_scale() -> None:
    w = world([SimPlayer("a", 1400.0), SimPlayer("b", 1000.0)])
    # gap 400 at Θ_world 800: 1/(1 + e^−0.5) = 0.622459…
    assert math.isclose(w.true_p(["a"], ["b"]), 1 / (1 + math.exp(-0.5)))


def test_a_thrower_loses_their_rounds_then_plays_normally() -> None:
    thrower = SimPlayer("t", 1300.0, "thrower", throws_left=2)
    w = world([thrower, SimPlayer("x", 1000.0), SimPlayer("y", 1000.0), SimPlayer("z", 1000.0)], 5)
    w.round = 4  # before throw_from: plays normally, nothing counted
    assert w.round_p(["t", "x"], ["y", "z"]) == w.true_p(["t", "x"], ["y", "z"])
    assert thrower.throws_left == 2 and w.throw_span == {}
    w.round = 5
    assert w.round_p(["t", "x"], ["y", "z"]) == 0.0  # their team loses
    w.round = 7
    assert w.round_p(["y", "z"], ["t", "x"]) == 1.0  # on B: A wins
    assert thrower.throws_left == 0 and w.throw_span == {"t": (5, 7)}
    w.round = 8  # done throwing: back to the truth
    assert w.round_p(["t", "x"], ["y", "z"]) > 0.5


def test_throwers_on_both_teams_cancel_out() -> None:
    a = SimPlayer("a", 1200.0, "thrower", throws_left=5)
    b = SimPlayer("b", 1000.0, "thrower", throws_left=5)
    w = world([a, b])
    assert w.round_p(["a"], ["b"]) == w.true_p(["a"], ["b"])
    assert a.throws_left == b.throws_left == 4
