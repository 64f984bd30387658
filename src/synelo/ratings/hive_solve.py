"""H8, the full-history solve of the Hive model: every player's skill fitted to all of a
pool's rounds at once under a Gamma(k, θ) prior, with numpy and scipy's L-BFGS-B.

The online update (H3–H6) takes one gradient step per round and forgets the round; the solve
maximises the same likelihood over the whole history, which converges far faster for players
with few rounds and is exact where the online steps only approach. Skills get the seed's
Gamma prior; the side offsets and commanding skills, which the seed's solve leaves out, a
Normal(0, w²) prior.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from synelo.ratings.hive import HiveParams, HiveRound, HiveSkill

if TYPE_CHECKING:
    import scipy.sparse

# Stop when no player's projected gradient exceeds this. A player's curvature is about
# p(1 − p)·(t/Σt)² a round, 0.5 for 1,200 rounds of 12v12: their s is then within ~2·10⁻⁵ of
# the maximum, 0.004 of a display point. Much smaller asks more than the double
# precision of a sum over 10⁵ rounds gives.
GRADIENT_TOLERANCE = 1e-5
MAX_ITERATIONS = 20_000
RESTARTS = 5
FLOOR = 1e-6  # the smallest skill the solve keeps, times θ: the prior lives on s > 0


@dataclass(frozen=True, slots=True)
class SolveReport:
    """How a solve ended: iterations, whether it met the tolerance, the final largest
    projected gradient and the negative log posterior."""

    iterations: int
    converged: bool
    gradient: float
    objective: float
    message: str = ""


def design(
    rounds: Sequence[HiveRound], skills: Mapping[str, HiveSkill], params: HiveParams
) -> tuple[list[str], scipy.sparse.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """The players, the sparse design matrix, the context bias of each round, the results G
    and the starting point. Each player has three columns, for s, o and χ: X[j, i] is
    T·t/Σt for s, T·σ·t/Σt for o and T·c/Σc for χ of player i in round j (H2), so that
    logit p_j = (X·x)_j + F_j."""
    index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    bias = np.empty(len(rounds))
    results = np.empty(len(rounds))
    for j, rnd in enumerate(rounds):
        play_w = sum(p.t for p in rnd.presences)
        command_w = sum(p.c for p in rnd.presences)
        for p in rnd.presences:
            i = 3 * index.setdefault(p.player, len(index))
            if p.t > 0.0:
                rows += [j, j]
                cols += [i, i + 1]
                vals += [p.sign * p.t / play_w, p.sign * p.side * p.t / play_w]
            if p.c > 0.0:
                rows.append(j)
                cols.append(i + 2)
                vals.append(p.sign * p.c / command_w)
        bias[j] = rnd.bias
        results[j] = rnd.g
    players = list(index)
    import scipy.sparse  # here, not at the top: see `solve_skills`

    matrix = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(rounds), 3 * len(players)))
    start = np.empty(3 * len(players))
    for n, player in enumerate(players):
        known = skills.get(player)
        online = (params.s0, 0.0, 0.0) if known is None else (known.s, known.o, known.chi)
        start[3 * n : 3 * n + 3] = (online[0] - params.theta, online[1], online[2])
    return players, matrix, bias, results, start


def solve_skills(
    rounds: Sequence[HiveRound],
    skills: Mapping[str, HiveSkill],
    params: HiveParams,
    report: list[SolveReport] | None = None,
) -> dict[str, HiveSkill]:
    """H8: the skills s > 0, side offsets o and commanding skills χ that maximise

        Σ_j [G_j·log p_j + (1 − G_j)·log(1 − p_j)]
          + Σ_i [(k − 1)·log s_i − s_i/θ] − Σ_i (o_i² + χ_i²) / (2·w²)

    with logit p_j from H2 and w = `solve_prior_sd`. Its gradient in s_i is the seed's
    Σ_j T·(G_j − p_j)·t/Σt + (k − 1)/s_i − 1/θ, and alike for o_i and χ_i with their own
    weights and the Normal prior's −o_i/w², −χ_i/w². Each iteration computes every round's
    prediction, then every player's step, until no projected gradient exceeds
    GRADIENT_TOLERANCE.

    The scales: the solve puts a player without rounds at the prior's mode (k − 1)θ, and
    the online update starts a new player at its mean kθ. The solve therefore works on
    s_online − θ and hands back s_solve + θ, so that a player the rounds say nothing about
    keeps the level a newcomer starts at; a skill below the bound starts the solve at
    FLOOR·θ. The context bias and r stay as they are. Returns the new state of every
    player in `rounds`; their AdaGrad sums are kept, so the online update goes on from
    there."""
    players, x, bias, g, start = design(rounds, skills, params)
    if not players:
        return {}
    xt = x.T.tocsr()
    k1, inv_theta = params.k - 1.0, 1.0 / params.theta
    inv_w2 = 1.0 / params.solve_prior_sd**2
    floor = FLOOR * params.theta
    is_s = np.zeros(len(start), dtype=bool)
    is_s[0::3] = True

    def objective(v: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ v + bias
        # −log-likelihood, stable at both ends: G·log(1 + e^−z) + (1 − G)·log(1 + e^z)
        nll = float(np.sum(g * np.logaddexp(0.0, -z) + (1.0 - g) * np.logaddexp(0.0, z)))
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        s, rest = v[is_s], v[~is_s]
        prior = float(np.sum(k1 * np.log(s) - s * inv_theta) - 0.5 * inv_w2 * np.sum(rest**2))
        grad = -(xt @ (g - p))
        grad[is_s] -= k1 / s - inv_theta
        grad[~is_s] += inv_w2 * rest
        return nll - prior, grad

    # scipy.optimize costs a quarter of a second to import, and every replay, advise or
    # re-rate that loads the Hive model imports this module; only a solve needs it
    import scipy.optimize

    lower = np.where(is_s, floor, -np.inf)
    bounds = scipy.optimize.Bounds(lower, np.full(len(start), np.inf))
    point = np.where(is_s, np.maximum(start, floor), start)
    iterations, largest, value, message = 0, np.inf, np.inf, ""
    # L-BFGS-B ends early when its line search can no longer see the objective fall (a sum
    # over 10⁵ rounds, to double precision); started again from there with a fresh curvature
    # memory, it goes on. A few restarts at most.
    for _ in range(RESTARTS):
        result = scipy.optimize.minimize(
            objective,
            point,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={
                "maxiter": MAX_ITERATIONS - iterations,
                "gtol": GRADIENT_TOLERANCE,
                "ftol": 0.0,
            },
        )
        point, iterations = result.x, iterations + int(result.nit)
        value, grad = objective(point)
        largest = float(np.max(np.abs(np.where((point <= lower) & (grad > 0), 0.0, grad))))
        message = str(result.message)
        if largest <= GRADIENT_TOLERANCE or iterations >= MAX_ITERATIONS:
            break
    if report is not None:
        report.append(
            SolveReport(iterations, largest <= GRADIENT_TOLERANCE, largest, value, message)
        )
    out: dict[str, HiveSkill] = {}
    for n, player in enumerate(players):
        s, o, chi = (float(v) for v in point[3 * n : 3 * n + 3])
        old = skills.get(player)
        base = HiveSkill(params.s0) if old is None else old
        out[player] = replace(base, s=s + params.theta, o=o, chi=chi)
    return out
