"""H8, the full-history solve of the Hive model: every player's skill fitted to all of a
pool's rounds at once under a Gamma(k, θ) prior, with numpy and scipy's L-BFGS-B.

The online update (H3) takes one gradient step per round and forgets the round; the solve
maximises the same likelihood over the whole history, which converges far faster for players
with few rounds and is exact where the online steps only approach.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import scipy.optimize
import scipy.sparse

from synelo.ratings.hive import HiveParams, HiveRound, HiveSkill

GRADIENT_TOLERANCE = 1e-6  # stop when no player's projected gradient exceeds this
MAX_ITERATIONS = 20_000
FLOOR = 1e-6  # the smallest skill the solve keeps, times kθ: the prior lives on s > 0


@dataclass(frozen=True, slots=True)
class SolveReport:
    """How a solve ended: iterations, whether it met the tolerance, the final largest
    projected gradient and the negative log posterior."""

    iterations: int
    converged: bool
    gradient: float
    objective: float


def design(
    rounds: Sequence[HiveRound], skills: Mapping[str, HiveSkill], s0: float
) -> tuple[list[str], scipy.sparse.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """The players, the sparse matrix X (X[j, i] = T·t/Σt of player i in round j), the part
    of each round's logit that the solve holds fixed (F, side offsets, commanding), the
    results G, and each player's starting skill."""
    index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    fixed = np.zeros(len(rounds))
    results = np.empty(len(rounds))
    for j, rnd in enumerate(rounds):
        play_w = sum(p.t for p in rnd.presences)
        command_w = sum(p.c for p in rnd.presences)
        offset = command = 0.0
        for p in rnd.presences:
            skill = skills.get(p.player)
            if p.t > 0.0:
                i = index.setdefault(p.player, len(index))
                rows.append(j)
                cols.append(i)
                vals.append(p.sign * p.t / play_w)
                if skill is not None:
                    offset += p.sign * p.t * p.side * skill.o
            if p.c > 0.0 and skill is not None:
                command += p.sign * p.c * skill.chi
        fixed[j] = rnd.bias + (offset / play_w if play_w > 0 else 0.0)
        fixed[j] += command / command_w if command_w > 0 else 0.0
        results[j] = rnd.g
    players = list(index)
    matrix = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(rounds), len(players)))
    start = np.array([skills[p].s if p in skills else s0 for p in players])
    return players, matrix, fixed, results, start


def solve_skills(
    rounds: Sequence[HiveRound],
    skills: Mapping[str, HiveSkill],
    params: HiveParams,
    report: list[SolveReport] | None = None,
) -> dict[str, HiveSkill]:
    """H8: the skills s > 0 that maximise

        Σ_j [G_j·log p_j + (1 − G_j)·log(1 − p_j)] + Σ_i [(k − 1)·log s_i − s_i/θ]

    with logit p_j from H2, the offsets, commanding skills and bias held. Its gradient in
    s_i is the seed's Σ_j T·(G_j − p_j)·t/Σt + (k − 1)/s_i − 1/θ: each iteration computes
    every round's prediction, then every player's step, until no projected gradient
    exceeds GRADIENT_TOLERANCE. The online scale is the solve's: a new player starts at the
    prior's mean kθ, and a skill the online steps took to 0 or below starts the solve at
    FLOOR·kθ. Returns the new state of every player in `rounds`."""
    players, x, fixed, g, start = design(rounds, skills, params.s0)
    if not players:
        return {}
    xt = x.T.tocsr()
    k1, inv_theta = params.k - 1.0, 1.0 / params.theta
    floor = FLOOR * params.s0

    def objective(s: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ s + fixed
        # −log-likelihood, stable at both ends: G·log(1 + e^−z) + (1 − G)·log(1 + e^z)
        nll = float(np.sum(g * np.logaddexp(0.0, -z) + (1.0 - g) * np.logaddexp(0.0, z)))
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        prior = float(np.sum(k1 * np.log(s) - s * inv_theta))
        grad = -(xt @ (g - p)) - (k1 / s - inv_theta)
        return nll - prior, grad

    result = scipy.optimize.minimize(
        objective,
        np.maximum(start, floor),
        jac=True,
        method="L-BFGS-B",
        bounds=[(floor, None)] * len(players),
        options={"maxiter": MAX_ITERATIONS, "gtol": GRADIENT_TOLERANCE, "ftol": 0.0},
    )
    if report is not None:
        _, grad = objective(result.x)
        projected = np.where((result.x <= floor) & (grad > 0), 0.0, grad)
        report.append(
            SolveReport(
                int(result.nit),
                float(np.max(np.abs(projected))) <= GRADIENT_TOLERANCE,
                float(np.max(np.abs(projected))),
                float(result.fun),
            )
        )
    out: dict[str, HiveSkill] = {}
    for player, value in zip(players, result.x, strict=True):
        old = skills.get(player)
        out[player] = HiveSkill(float(value)) if old is None else replace(old, s=float(value))
    return out
