"""W10, the full MAP fit of Whole History Rating: every PlayerDay and every epad of a history
at once, by Newton's method on the joint log posterior (docs/maths/whr.md).

The posterior is log-concave (logistic likelihood, Gaussian priors, the first day's virtual
games), so Newton's method with a backtracking line search converges to the one maximum;
with the BPST epad (W7), whose rh is held at each iteration's ratings, to a fixed point. Its
linear system couples teammates and opponents, so it is solved by conjugate gradients,
preconditioned by each player's own tridiagonal Hessian: the very step of Coulom's per-player
Newton iteration, batched for all players in one banded solve. Where the paper cycles over
players one at a time, this takes the same per-player steps together and corrects them for
the games that tie players to each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import NDArray

from synelo.ratings.whr import EPAD_PRIOR_SD, Anchor, Drift, EpadKind, PlayerDays, epad_design

Vector = NDArray[np.float64]
TOLERANCE = 1e-6  # natural units (2·10⁻⁴ Elo): stop when no rating moves more in a step
MAX_ITERATIONS = 100
CG_ITERATIONS = 500


@dataclass(frozen=True, slots=True)
class FitGame:
    """One game of a history: the players of each side, its day, and A's score (1, ½, 0)."""

    team_a: tuple[str, ...]
    team_b: tuple[str, ...]
    day: int
    score: float


@dataclass(slots=True)
class FitResult:
    """The MAP: each player's days with ratings, game terms and variances, the epads with
    their variances, and how the iteration ended."""

    players: dict[str, PlayerDays]
    variances: dict[str, list[float]]
    epad: dict[str, float]
    epad_variance: dict[str, float]
    iterations: int
    converged: bool
    largest_change: float
    log_posterior: float = 0.0


class _Problem:
    """The history as arrays: PlayerDays grouped by player in day order, the sparse map A
    from PlayerDays to each game's logit, and the drift links between consecutive days."""

    def __init__(
        self,
        games: Sequence[FitGame],
        drift: Drift,
        epad_kind: EpadKind,
        steps: int,
        anchors: Mapping[str, Anchor],
        weights: Mapping[str, float] | None = None,
        epad_prior: Mapping[str, tuple[float, float]] | None = None,
    ):
        self.games, self.epad_kind, self.steps = games, epad_kind, steps
        keys: set[tuple[str, int]] = set()
        for g in games:
            keys.update((p, g.day) for p in g.team_a)
            keys.update((p, g.day) for p in g.team_b)
        self.keys = sorted(keys)
        index = {k: i for i, k in enumerate(self.keys)}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for j, g in enumerate(games):
            for team, sign in ((g.team_a, 1.0), (g.team_b, -1.0)):
                c = sign / len(team)
                for p in team:
                    rows.append(j)
                    cols.append(index[(p, g.day)])
                    vals.append(c)
        n = len(self.keys)
        self.entry_game = np.asarray(rows, dtype=np.int64)
        self.entry_day = np.asarray(cols, dtype=np.int64)
        self.entry_coef = np.asarray(vals)
        self.a = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(games), n))
        self.at = self.a.T.tocsr()
        self.score = np.asarray([g.score for g in games])
        weight = np.bincount(self.entry_day, weights=np.abs(self.entry_coef), minlength=n)
        self.weight = weight
        players = [k[0] for k in self.keys]
        days = np.asarray([k[1] for k in self.keys], dtype=np.float64)
        same = np.asarray([players[i] == players[i + 1] for i in range(n - 1)], dtype=bool)
        first = np.ones(n, dtype=bool)
        first[1:] = ~same
        # W3's virtual games on a first day, or the Gaussian prior an admin's set left (W8)
        gaussian = np.asarray([first[i] and players[i] in anchors for i in range(n)], dtype=bool)
        self.first = first & ~gaussian
        self.anchored = np.flatnonzero(gaussian)
        given = [anchors[players[i]] for i in self.anchored]
        self.anchor_mean = np.asarray([a.mean for a in given])
        self.anchor_precision = np.asarray([1.0 / a.variance for a in given])
        # W: the weight a player played before each day (exclusive cumulative sum per player),
        # after what they played before the fit's first round (`weights`: a season's S4)
        total = np.cumsum(weight) - weight
        start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
        earlier = weights or {}
        before = total - total[start] + np.asarray([earlier.get(p, 0.0) for p in players])
        self.weight_before = before
        link = np.flatnonzero(same)  # day i tied to day i + 1
        self.link = link
        gap = days[link + 1] - days[link]
        self.link_var = np.asarray(
            [
                drift.variance(float(gp), float(weight[i + 1]), float(before[i]))
                for i, gp in zip(link, gap, strict=True)
            ]
        )
        self.epad_names: list[str] = []
        if epad_kind == "simple":
            self.epad_names = [str(k) for k in range(1, steps + 1)]
        elif epad_kind == "bpst":
            self.epad_names = [f"{k}:{lvl}" for k in range(1, steps + 1) for lvl in ("low", "high")]
        # each epad's prior, Normal(mean, variance): W6's Normal(0, EPAD_PRIOR_SD²), or a
        # former fit's posterior (the stretch before a season, S4)
        prior = epad_prior or {}
        default = (0.0, EPAD_PRIOR_SD**2)
        self.epad_mean = np.asarray([prior.get(n, default)[0] for n in self.epad_names])
        self.epad_var = np.asarray([prior.get(n, default)[1] for n in self.epad_names])
        self.uneven = [j for j, g in enumerate(games) if len(g.team_a) != len(g.team_b)]
        self.m = self.design(np.zeros(n))

    def design(self, r: Vector) -> scipy.sparse.csr_matrix:
        """The epad design M (games × epads) at ratings r: W2's steps, with W7's rh for BPST."""
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        position = {name: i for i, name in enumerate(self.epad_names)}
        index = {k: i for i, k in enumerate(self.keys)} if self.epad_kind == "bpst" else {}
        for j in self.uneven if self.epad_names else ():
            g = self.games[j]
            ra = [float(r[index[(p, g.day)]]) for p in g.team_a] if index else [0.0] * len(g.team_a)
            rb = [float(r[index[(p, g.day)]]) for p in g.team_b] if index else [0.0] * len(g.team_b)
            for name, mult in epad_design(self.epad_kind, self.steps, ra, rb).items():
                rows.append(j)
                cols.append(position[name])
                vals.append(mult)
        return scipy.sparse.csr_matrix(
            (vals, (rows, cols)), shape=(len(self.games), len(self.epad_names))
        )


def fit(
    games: Sequence[FitGame],
    drift: Drift,
    epad_kind: EpadKind = "simple",
    steps: int = 15,
    *,
    start: Mapping[str, float] | None = None,
    epad_start: Mapping[str, float] | None = None,
    epad_mode: str = "joint",
    anchors: Mapping[str, Anchor] | None = None,
    weights: Mapping[str, float] | None = None,
    epad_prior: Mapping[str, tuple[float, float]] | None = None,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> FitResult:
    """W10: the MAP of all PlayerDays (starting from each player's `start` rating) and, with
    `epad_mode` "joint", of the epads with them; "fixed" fits the ratings without epad first
    and then the epads alone with those ratings held fixed (the seed's two approaches). A
    player in `anchors` has that Gaussian prior on their first day instead of W3's, and
    W4's W counts from `weights[player]` (the game weight they played before). An epad in
    `epad_prior` has that (mean, variance) as its prior instead of W6's."""
    problem = _Problem(games, drift, epad_kind, steps, anchors or {}, weights, epad_prior)
    start = start or {}
    r = np.asarray([start.get(p, 0.0) for p, _ in problem.keys])
    e = np.asarray([(epad_start or {}).get(n, 0.0) for n in problem.epad_names])
    if epad_mode == "fixed" or not problem.epad_names:
        free_epad = np.zeros(len(e), dtype=bool)
        e_fixed = np.zeros(len(e))
        r, _, its, ok, change = _newton(problem, r, e_fixed, free_epad, tolerance, max_iterations)
        if problem.epad_names:
            r, e, its2, ok2, change2 = _newton(
                problem, r, e, np.ones(len(e), dtype=bool), tolerance, max_iterations, rates=False
            )
            its, ok, change = its + its2, ok and ok2, max(change, change2)
    else:
        r, e, its, ok, change = _newton(
            problem, r, e, np.ones(len(e), dtype=bool), tolerance, max_iterations
        )
    return _result(problem, r, e, its, ok, change)


def _newton(
    problem: _Problem,
    r: Vector,
    e: Vector,
    free_epad: NDArray[np.bool_],
    tolerance: float,
    max_iterations: int,
    rates: bool = True,
) -> tuple[Vector, Vector, int, bool, float]:
    """Newton's method on the log posterior over r (when `rates`) and the free epads."""
    change = np.inf
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        if problem.epad_kind == "bpst":
            problem.m = problem.design(r)
        value, gr, ge, w = _posterior(problem, r, e)
        gr = gr if rates else np.zeros_like(gr)
        ge = np.where(free_epad, ge, 0.0)
        dr, de = _direction(problem, r, w, gr, ge, free_epad, rates)
        step = 1.0
        while True:  # backtrack until the posterior rises (it is concave: a step exists)
            r_new, e_new = r + step * dr, e + step * de
            new_value = _posterior(problem, r_new, e_new, value_only=True)[0]
            if new_value >= value - 1e-12 * abs(value) or step < 1e-8:
                break
            step /= 2.0
        r, e = r_new, e_new
        change = float(
            max(np.max(np.abs(step * dr), initial=0.0), np.max(np.abs(step * de), initial=0.0))
        )
        if step < 1e-8:  # the line search found no rise: stuck, not converged
            return r, e, iteration, False, change
        if change < tolerance:
            return r, e, iteration, True, change
    return r, e, iteration, False, change


def _posterior(
    problem: _Problem, r: Vector, e: Vector, value_only: bool = False
) -> tuple[float, Vector, Vector, Vector]:
    """The log posterior, its gradients in r and in the epads, and each game's curvature
    p(1 − p)."""
    z = problem.a @ r + problem.m @ e
    y = problem.score
    log_p = -np.logaddexp(0.0, -z)
    log_q = -np.logaddexp(0.0, z)
    first = problem.first
    rf = r[first]
    link, var = problem.link, problem.link_var
    diff = r[link + 1] - r[link]
    value = float(
        np.sum(y * log_p + (1.0 - y) * log_q)
        - np.sum(np.logaddexp(0.0, -rf) + np.logaddexp(0.0, rf))
        - np.sum(diff * diff / (2.0 * var))
        - np.sum((e - problem.epad_mean) ** 2 / problem.epad_var) / 2.0
        - np.sum(problem.anchor_precision * (r[problem.anchored] - problem.anchor_mean) ** 2) / 2.0
    )
    if value_only:
        return value, r, e, r
    p = np.exp(log_p)
    resid = y - p
    gr = problem.at @ resid
    pf = 1.0 / (1.0 + np.exp(-rf))
    gr[first] += 1.0 - 2.0 * pf
    gr[problem.anchored] -= problem.anchor_precision * (r[problem.anchored] - problem.anchor_mean)
    flow = diff / var
    np.add.at(gr, link, flow)
    np.subtract.at(gr, link + 1, flow)
    ge = problem.m.T @ resid - (e - problem.epad_mean) / problem.epad_var
    return value, gr, ge, p * (1.0 - p)


def _precision_band(problem: _Problem, r: Vector, w: Vector) -> tuple[Vector, Vector]:
    """Each player's own block of −H: the tridiagonal of Coulom's per-player Newton step
    (diagonal, and the off-diagonal between a day and the next, 0 across players)."""
    n = len(r)
    diag: Vector = np.bincount(
        problem.entry_day, weights=problem.entry_coef**2 * w[problem.entry_game], minlength=n
    ).astype(np.float64)
    pf = 1.0 / (1.0 + np.exp(-r[problem.first]))
    diag[problem.first] += 2.0 * pf * (1.0 - pf)
    diag[problem.anchored] += problem.anchor_precision
    inv = 1.0 / problem.link_var
    np.add.at(diag, problem.link, inv)
    np.add.at(diag, problem.link + 1, inv)
    off = np.zeros(max(n - 1, 0))
    off[problem.link] = -inv
    return diag, off


def _direction(
    problem: _Problem,
    r: Vector,
    w: Vector,
    gr: Vector,
    ge: Vector,
    free_epad: NDArray[np.bool_],
    rates: bool,
) -> tuple[Vector, Vector]:
    """The Newton direction: (−H)·d = g by conjugate gradients, preconditioned by the
    players' tridiagonal blocks and the epads' diagonal."""
    n, k = len(r), len(ge)
    diag, off = _precision_band(problem, r, w)
    band = np.zeros((3, n))
    band[0, 1:] = off
    band[1] = diag
    band[2, :-1] = off
    m, link, inv = problem.m, problem.link, 1.0 / problem.link_var
    mask_r = 1.0 if rates else 0.0
    e_diag = np.asarray(m.multiply(m).T @ w).ravel() + 1.0 / problem.epad_var if k else np.zeros(0)

    def apply(vr: Vector, ve: Vector) -> tuple[Vector, Vector]:
        vr = vr * mask_r
        ve = np.where(free_epad, ve, 0.0)
        t = w * (problem.a @ vr + m @ ve)
        hr = problem.at @ t
        pf = 1.0 / (1.0 + np.exp(-r[problem.first]))
        hr[problem.first] += 2.0 * pf * (1.0 - pf) * vr[problem.first]
        hr[problem.anchored] += problem.anchor_precision * vr[problem.anchored]
        flow = (vr[link] - vr[link + 1]) * inv
        np.add.at(hr, link, flow)
        np.subtract.at(hr, link + 1, flow)
        he = m.T @ t + ve / problem.epad_var
        return hr * mask_r, np.where(free_epad, he, 0.0)

    def precondition(vr: Vector, ve: Vector) -> tuple[Vector, Vector]:
        pr = scipy.linalg.solve_banded((1, 1), band, vr) * mask_r if n else vr
        return pr, np.where(free_epad, ve / np.where(e_diag > 0, e_diag, 1.0), 0.0)

    norm = float(np.sqrt(gr @ gr + ge @ ge))
    target = min(0.1, np.sqrt(norm)) * norm  # inexact Newton: looser far from the maximum
    xr, xe = np.zeros(n), np.zeros(k)
    res_r, res_e = gr.copy(), ge.copy()
    zr, ze = precondition(res_r, res_e)
    pr, pe = zr.copy(), ze.copy()
    rz = float(res_r @ zr + res_e @ ze)
    for _ in range(CG_ITERATIONS):
        if np.sqrt(res_r @ res_r + res_e @ res_e) <= max(target, 1e-13):
            break
        qr, qe = apply(pr, pe)
        curvature = float(pr @ qr + pe @ qe)
        if curvature <= 0.0:
            break
        alpha = rz / curvature
        xr += alpha * pr
        xe += alpha * pe
        res_r -= alpha * qr
        res_e -= alpha * qe
        zr, ze = precondition(res_r, res_e)
        rz_new = float(res_r @ zr + res_e @ ze)
        beta = rz_new / rz
        rz = rz_new
        pr = zr + beta * pr
        pe = ze + beta * pe
    return xr, xe


def _inverse_diagonal(diag: Vector, off: Vector) -> Vector:
    """W9: the diagonal of the inverse of a symmetric tridiagonal matrix (the players'
    blocks side by side), by forward and backward pivots: 1/(f_i + b_i − a_i)."""
    n = len(diag)
    fwd = np.empty(n)
    bwd = np.empty(n)
    d, o = diag.tolist(), off.tolist()
    f = b = 0.0
    out_f, out_b = [0.0] * n, [0.0] * n
    for i in range(n):
        f = d[i] - (o[i - 1] * o[i - 1] / f if i > 0 and o[i - 1] else 0.0)
        out_f[i] = f
    for i in range(n - 1, -1, -1):
        b = d[i] - (o[i] * o[i] / b if i < n - 1 and o[i] else 0.0)
        out_b[i] = b
    fwd[:] = out_f
    bwd[:] = out_b
    return 1.0 / (fwd + bwd - diag)


def _result(
    problem: _Problem, r: Vector, e: Vector, iterations: int, converged: bool, change: float
) -> FitResult:
    """The fit as each player's days, with every game's offset at the MAP (W5's terms)."""
    z = problem.a @ r + problem.m @ e
    value, _, _, w = _posterior(problem, r, e)
    diag, off = _precision_band(problem, r, w)
    variance = _inverse_diagonal(diag, off)
    coef = problem.entry_coef
    own = np.abs(coef)
    sign = np.sign(coef)
    pd = problem.entry_day
    offset = sign * z[problem.entry_game] - own * r[pd]
    score = np.where(
        coef > 0, problem.score[problem.entry_game], 1.0 - problem.score[problem.entry_game]
    )
    order = np.argsort(pd, kind="stable")
    pd, own, offset, score = pd[order], own[order], offset[order], score[order]
    starts = np.flatnonzero(problem.first | _anchored_mask(problem))
    bounds = np.append(starts, len(problem.keys))
    cuts = np.searchsorted(pd, bounds)
    players: dict[str, PlayerDays] = {}
    variances: dict[str, list[float]] = {}
    for k, first in enumerate(starts.tolist()):
        last = int(bounds[k + 1])
        lo, hi = int(cuts[k]), int(cuts[k + 1])
        name = problem.keys[first][0]
        players[name] = PlayerDays(
            [problem.keys[i][1] for i in range(first, last)],
            r[first:last].copy(),
            pd[lo:hi] - first,
            own[lo:hi].copy(),
            offset[lo:hi].copy(),
            score[lo:hi].copy(),
        )
        variances[name] = variance[first:last].tolist()
    e_var = _epad_variance(problem, w)
    return FitResult(
        players,
        variances,
        {n: float(v) for n, v in zip(problem.epad_names, e, strict=True)},
        {n: float(v) for n, v in zip(problem.epad_names, e_var, strict=True)},
        iterations,
        converged,
        change,
        value,
    )


def _anchored_mask(problem: _Problem) -> NDArray[np.bool_]:
    mask = np.zeros(len(problem.keys), dtype=bool)
    mask[problem.anchored] = True
    return mask


def _epad_variance(problem: _Problem, w: Vector) -> Vector:
    """Each epad's variance from its own curvature (the ratings held at the MAP)."""
    if not problem.epad_names:
        return np.zeros(0)
    m = problem.m
    return 1.0 / (np.asarray(m.multiply(m).T @ w).ravel() + 1.0 / problem.epad_var)
