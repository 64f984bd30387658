"""Why the full-size simulation's Spearman stays near 0.83: a stripped-down check.

The world of `synelo simulate`'s full size with nothing but the rating rule: 200 players with
true skills normal(1000, 300), 20,000 rounds of 12v12 drawn at random from them, teams split
by current rating (a snake draft), the winner drawn from F1 on the true skills with Θ = 2400,
every player moved by K·(S − P). Only K varies. It prints Spearman(rating, true skill) and the
slope of rating on skill for fixed K and for a K that falls with the player's rounds played.

    python docs/simulate/k_schedule.py      # a few seconds

Measured (docs/maths/rating.md, F3): fixed K 8, 17.5 and 72 give 0.87–0.88; K = max(2, 72/√(1 +
n/20)) gives 0.93. So a rating that is Elo-like but lowers K with experience reaches 0.90 in
this world; SynElo's F3 is meant to lower K that way but, at Θ = 2400, keeps C near 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(np.argsort(np.argsort(a)), np.argsort(np.argsort(b)))[0, 1])


def run(
    k_of: Callable[[np.ndarray], np.ndarray],
    rounds: int = 20_000,
    players: int = 200,
    team: int = 12,
    theta: float = 2400.0,
    sd: float = 300.0,
    seed: int = 1,
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    true = rng.normal(1000.0, sd, players)
    rating = np.full(players, 1000.0)
    played = np.zeros(players)
    for _ in range(rounds):
        seated = rng.choice(players, 2 * team, replace=False)
        order = seated[np.argsort(-rating[seated])]
        a = np.concatenate([order[0::4], order[3::4]])  # snake draft: 1 4 5 8 … against 2 3 6 7 …
        b = np.concatenate([order[1::4], order[2::4]])
        p = 1.0 / (1.0 + np.exp(-(rating[a].sum() - rating[b].sum()) / theta))
        true_p = 1.0 / (1.0 + np.exp(-(true[a].sum() - true[b].sum()) / theta))
        s = 1.0 if rng.random() < true_p else 0.0
        rating[a] += k_of(played[a]) * (s - p)
        rating[b] += k_of(played[b]) * (p - s)
        played[a] += 1
        played[b] += 1
    return spearman(rating, true), float(np.polyfit(true, rating, 1)[0])


if __name__ == "__main__":
    for label, k_of in [
        ("fixed K 72", lambda n: np.full_like(n, 72.0)),
        ("fixed K 17.5", lambda n: np.full_like(n, 17.5)),
        ("fixed K 8", lambda n: np.full_like(n, 8.0)),
        (
            "K = max(2, 72/sqrt(1 + n/20))",
            lambda n: np.maximum(2.0, 72.0 / np.sqrt(1.0 + n / 20.0)),
        ),
    ]:
        rho, slope = run(k_of)
        print(f"{label:>32}: Spearman {rho:.3f}, slope of rating on skill {slope:.2f}")
