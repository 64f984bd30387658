"""Peer check of W10 (`synelo.ratings.whr_fit.fit`) against the PyPI package
`whole-history-rating` (module `whr`), an independent implementation of Coulom's WHR.

Both fit the same generated 1v1 history with the same priors: the standard drift
σ² = gap·w2 between a player's days (our `Drift("constant", w2)`, its config "w2"), one
virtual win and one virtual loss against a 0 player on the first day (our W3, its
"initial_prior_wins": 1), no extra-player advantage and no handicap. Both maximise the same
posterior, so every player's last-day rating must agree to well within an Elo; and it must
not agree with a fit under another w2, or the check would pass for any answer.

The history is small so that the package, pure Python, converges fast: 3,000 games of 60
players over 200 days (4,793 PlayerDays). Iterated until its largest gradient component is
below 10⁻⁵, it lands 0.06 Elo from ours at worst, while a w2 10 % wider moves some player by
about 7 Elo.

The package's Elo is 400/ln 10 · r (0 at r = 0), ours 1500 + 400/ln 10 · r: the natural
ratings are compared, scaled to Elo. Its `hessian_damping` (Coulom's HessianEpsilon, 1 by
default) is set to 0: it is subtracted from the Hessian of each player's Newton step, which
changes how fast its iteration converges but not the point it converges to (the gradient
does not contain it), and without it the package converges in a third of the iterations.
"""

from __future__ import annotations

import math
import random

import whr

from synelo.ratings.whr import NATURAL, Drift
from synelo.ratings.whr_fit import FitGame, FitResult, fit

W2 = 300.0  # Elo² per day, on both sides
PLAYERS = 60
DAYS = 200
GAMES_A_DAY = 15
PEER_PRECISION = 1e-5  # its largest gradient component at the end (natural units)
TOLERANCE_ELO = 1.0


def history(seed: int = 2008) -> list[FitGame]:
    """1v1 games between players whose skills drift by the prior itself: a random walk of
    variance W2 Elo² a day, from Normal(0, 200 Elo). Decisive results only (the package models
    draws its own way)."""
    rng = random.Random(seed)
    skill = [rng.gauss(0.0, 200.0 / NATURAL) for _ in range(PLAYERS)]
    step = math.sqrt(W2) / NATURAL
    games: list[FitGame] = []
    for day in range(DAYS):
        skill = [s + rng.gauss(0.0, step) for s in skill]
        for _ in range(GAMES_A_DAY):
            a, b = rng.sample(range(PLAYERS), 2)
            p_a = 1.0 / (1.0 + math.exp(skill[b] - skill[a]))
            games.append(FitGame((f"p{a}",), (f"p{b}",), day, float(rng.random() < p_a)))
    return games


def peer_fit(games: list[FitGame]) -> dict[str, list[tuple[int, float]]]:
    """The package's MAP: each player's (day, Elo) from its own unrounded PlayerDays
    (`ratings_for_player` rounds to whole Elo)."""
    base = whr.WHR({"w2": W2, "initial_prior_wins": 1.0, "hessian_damping": 0.0})
    for g in games:
        # black = side A; a handicap of 0 is the package's pinned baseline: no advantage
        base.create_game(g.team_a[0], g.team_b[0], "B" if g.score == 1.0 else "W", g.day, 0)
    _, converged = base.auto_iterate(precision=PEER_PRECISION, batch_size=10)
    assert converged
    return {name: [(d.day, d.elo) for d in player.days] for name, player in base.players.items()}


def last_day_elo(result: FitResult) -> dict[str, float]:
    """Our last-day ratings on the package's scale (Elo 0 at r = 0)."""
    return {p: player.rating * NATURAL for p, player in result.players.items()}


def gaps(ours: dict[str, float], theirs: dict[str, list[tuple[int, float]]]) -> list[float]:
    return [abs(ours[p] - theirs[p][-1][1]) for p in theirs]


def every_day_gap(result: FitResult, theirs: dict[str, list[tuple[int, float]]]) -> float:
    """The largest difference over all PlayerDays, not only the last ones."""
    return max(
        abs(r * NATURAL - elo)
        for p, player in result.players.items()
        for r, (_, elo) in zip(player.r, theirs[p], strict=True)
    )


def test_fit_matches_whole_history_rating_within_an_elo_and_not_under_another_w2() -> None:
    """Every player's last-day rating from `fit` (constant drift w2, epad "none") is within
    1 Elo of the package's on the same games, with the same PlayerDays (and so is every
    earlier day); a fit with 1.1·w2 is more than 1 Elo away for some player, so the check
    tells even a prior 10 % off from the right one."""
    games = history()
    theirs = peer_fit(games)
    result = fit(games, Drift("constant", w2=W2), "none")
    assert result.converged

    # the same PlayerDays: one per player and day played, on the same days
    assert {p: list(player.days) for p, player in result.players.items()} == {
        p: [day for day, _ in days] for p, days in theirs.items()
    }
    assert len(theirs) == PLAYERS
    agree = gaps(last_day_elo(result), theirs)
    assert max(agree) < TOLERANCE_ELO
    assert every_day_gap(result, theirs) < TOLERANCE_ELO

    # the check has teeth: the ratings spread over hundreds of Elo, and a drift 10 % wider
    # moves some player's last day by more than the tolerance
    spread = [days[-1][1] for days in theirs.values()]
    assert max(spread) - min(spread) > 300.0
    other = fit(games, Drift("constant", w2=1.1 * W2), "none")
    assert max(gaps(last_day_elo(other), theirs)) > TOLERANCE_ELO
