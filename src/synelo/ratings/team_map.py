"""The whole-history MAP of a static team-sum skill model (M1–M3): what the rounds themselves
say about each player's skill, fitted once after the fact, with every round seen at once.

- M1, the link: P(A wins) = 1/(1 + exp(−(Σ_{i∈A} s_i − Σ_{j∈B} s_j)/Θ)), the closed-loop
  world's own (`synelo.sim.world`), with its scale Θ.
- M2, the prior: each skill s_i ~ Normal(μ, τ²), independent.
- M3, the fit: the skills that maximise the posterior, i.e. minimise
  L(s) = −Σ_r [o_r·ln p_r + (1 − o_r)·ln(1 − p_r)] + Σ_i (s_i − μ)²/(2τ²),
  o_r = 1, ½, 0 for a win, draw, loss of team A. L is convex (a logistic regression with a
  ridge penalty), so the minimum is unique; its gradient is −Xᵀ(o − p)/Θ + (s − μ)/τ² and
  its Hessian XᵀWX/Θ² + I/τ², W = diag(p(1 − p)), with X the rounds-by-players matrix of
  +1 (team A), −1 (team B), 0. Newton's method with a halving line search finds it.

The simulator (`synelo simulate`) compares the live pool's rank correlation with the hidden
skills against this fit's: no online rating that sees each round once, in order, can know
more about the skills than this posterior mode of the same rounds under the world's true
model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix

MAX_NEWTON = 100
STEP_TOLERANCE = 1e-9  # stop when no skill moves by more than this share of Θ
QUADRATIC = 1e-6  # below this Newton decrement (nats) the full step is taken unchecked


def round_matrix(
    rounds: Sequence[tuple[Sequence[int], Sequence[int], float]], players: int, theta: float
) -> tuple[csr_matrix, np.ndarray]:
    """M1's design: X/Θ (rounds × players; +1/Θ for team A, −1/Θ for team B, summed for a
    player listed twice) and the outcomes o_A; ValueError for an index or outcome out of
    range."""
    rows, cols, signs = [], [], []
    outcome = np.empty(len(rounds))
    for r, (team_a, team_b, o_a) in enumerate(rounds):
        if not 0.0 <= o_a <= 1.0:
            raise ValueError(f"round {r}: outcome {o_a} is not within [0, 1]")
        outcome[r] = o_a
        for team, sign in ((team_a, 1.0), (team_b, -1.0)):
            for i in team:
                if not 0 <= i < players:
                    raise ValueError(f"round {r}: player index {i} out of range")
                rows.append(r)
                cols.append(i)
                signs.append(sign)
    x = csr_matrix((np.array(signs) / theta, (rows, cols)), shape=(len(rounds), players))
    return x, outcome


def team_map(
    rounds: Sequence[tuple[Sequence[int], Sequence[int], float]],
    players: int,
    theta: float,
    prior_mean: float,
    prior_sd: float,
) -> np.ndarray:
    """M3: the MAP skills of `players` players (indexed 0…players−1) from `rounds`, each
    (team A's indices, team B's indices, o_A), under M1's link at scale `theta` and M2's
    prior Normal(prior_mean, prior_sd²), by Newton's method on z = s − μ. A player in no
    round keeps the prior mean."""
    if theta <= 0 or prior_sd <= 0:
        raise ValueError("theta and prior_sd must be positive")
    x, outcome = round_matrix(rounds, players, theta)  # the gap in logits is X·z
    precision = 1.0 / prior_sd**2
    z = np.zeros(players)

    def loss(z: np.ndarray) -> float:
        gap = x @ z
        # −[o·ln σ(g) + (1 − o)·ln σ(−g)] = ln(1 + e^g) − o·g, computed stably
        return float(np.sum(np.logaddexp(0.0, gap) - outcome * gap) + 0.5 * precision * z @ z)

    current = loss(z)
    for _ in range(MAX_NEWTON):
        p = 1.0 / (1.0 + np.exp(-(x @ z)))
        grad = -(x.T @ (outcome - p)) + precision * z
        hess = (x.T @ x.multiply((p * (1 - p))[:, None])).toarray() + precision * np.eye(players)
        step = np.linalg.solve(hess, -grad)
        decrement = float(-grad @ step)
        t = 1.0
        trial = loss(z + step)
        # halve until the loss falls enough (Armijo); near the minimum, where rounding
        # hides the loss's fall, the quadratic model is trusted
        while decrement > QUADRATIC and trial > current - 0.25 * t * decrement and t > 1e-12:
            t /= 2
            trial = loss(z + t * step)
        z, current = z + t * step, trial
        if np.max(np.abs(t * step), initial=0.0) < STEP_TOLERANCE * theta:
            break
    result: np.ndarray = z + prior_mean
    return result
