"""`synelo`: the service's own F1–F6, through the very functions the service calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from synelo.evaluation.adapters.base import HistoryInfo, OptionValue, RatingModel
from synelo.evaluation.history import Match
from synelo.models import Model, Param
from synelo.models.base import DEFAULT_SEASON_FRACTION, check_fraction
from synelo.models.synelo import SynElo, is_new_record, season_records
from synelo.ratings import (
    PlayerRecord,
    Rater,
    RecordBook,
    SynEloParams,
    default_k_min,
    linear_theta,
    new_window,
    roster_probability,
)


def _defaults() -> dict[str, float]:
    """The numeric parameters with their defaults for a new history, and `revised`: F3's
    version as a number (options are numbers), 1 for "revised", 0 for the seed's;
    `headcount` the same for `uneven`, 1 for F1u's "headcount", 0 for the seed's "sums". A
    pool's export starts from the pool's own instead (`SynEloReplay.create`: an old pool's
    seed F3 and sums), which `parameters` reports."""
    seed = SynEloParams()
    numeric: dict[str, float] = {
        f.name: getattr(seed, f.name)
        for f in fields(SynEloParams)
        if isinstance(getattr(seed, f.name), int | float)
    }
    return {**numeric, "k_min": default_k_min("revised"), "revised": 1, "headcount": 1}


class SynEloReplay(RatingModel):
    """Every match rated with `synelo.ratings.Rater`, through which the service's `rate_round`
    rates a round too: P from the round-start sums (F1), then F2–F5 per player. Everyone on a
    side is a participant. Parameters: those of a pool (SynEloParams). A history imported from
    a pool's journal brings that pool's parameters; one whose header names a `team_size`
    gets F1's default Θ = 100·max(k, 2) for it; any other gets that default for the largest
    team played so far, raised as larger teams first play (never from a later match). F3's
    version is the option `revised` (``-p revised=0`` for the seed's): by default the revised
    F3, except for a journal whose parameters do not name one, written by a pool that rated
    with the seed's. K_min, unless given, follows the F3 in use (`default_k_min`): 12 with the
    revised, 2 with the seed's. What `synelo tune` may fit is `SynElo`'s (the pool model's
    `tunable`)."""

    name = SynElo.name

    def __init__(self, params: SynEloParams, theta_from_teams: bool = False) -> None:
        self.params = params
        self._rater = Rater(params)  # the service's F2–F5 (`rate_round` rates through it too)
        self._book = RecordBook(params)
        # Without a Θ of its own the history gets F1's default for the largest team played
        # so far, so that no prediction depends on a match still to come.
        self._largest_team = 0 if theta_from_teams else None

    def _grow(self, match: Match) -> None:
        """F1: Θ = linear_theta(largest team so far), raised when a larger team first plays."""
        assert self._largest_team is not None
        size = max(len(match.team_a), len(match.team_b))
        if size > self._largest_team:
            self._largest_team = size
            self.params = self.params.with_changes(theta=linear_theta(size))
            self._rater = Rater(self.params)

    @classmethod
    def options(cls, model: type[Model[Any]]) -> dict[str, Param]:
        """The options (``-p name=value``): SynEloParams' numbers and `revised` (`_defaults`)."""
        return {name: Param(default) for name, default in _defaults().items()}

    @classmethod
    def create(
        cls, model: type[Model[Any]], options: Mapping[str, OptionValue], info: HistoryInfo
    ) -> SynEloReplay:
        """A fresh replay with `options` over a SynElo pool's parameters when the history
        is its export (see the class)."""
        # a pool's export names its model: only a SynElo pool's parameters are SynElo's
        synelo_pool = info.header.get("model", cls.name) == cls.name
        stored = info.header.get("params") if synelo_pool else None
        base = dict(stored or {})
        team_size = info.header.get("team_size")
        theta_from_teams = "theta" not in base and "theta" not in options and team_size is None
        if "theta" not in base:
            base["theta"] = linear_theta(int(team_size or info.first_team_size))
        if stored is None:
            base["convergence"], base["uneven"] = "revised", "headcount"
        else:  # a pool's journal: the pool's own F3 and F1 (the seed's before a choice)
            base.setdefault("convergence", "seed")
            base.setdefault("uneven", "sums")
        chosen = dict(options)
        if "headcount" in chosen:
            headcount = chosen.pop("headcount")
            if headcount not in (0, 1):
                raise ValueError(f"parameter 'headcount': {headcount!r} is not 0 or 1")
            base["uneven"] = "headcount" if headcount else "sums"
        if "revised" in chosen:
            revised = chosen.pop("revised")
            if revised not in (0, 1):
                raise ValueError(f"parameter 'revised': {revised!r} is not 0 or 1")
            base["convergence"] = "revised" if revised else "seed"
        if stored is None and "k_min" not in chosen:  # F5's K_min for the history's F3
            base["k_min"] = default_k_min(base["convergence"])
        return cls(SynEloParams.from_dict({**base, **chosen}), theta_from_teams)

    def predict(self, match: Match) -> float:
        if self._largest_team is not None:
            self._grow(match)
        return roster_probability(
            self._book.rating_sum(match.team_a),
            len(match.team_a),
            self._book.rating_sum(match.team_b),
            len(match.team_b),
            self.params.theta,
            self.params.uneven == "headcount",
            self.params.temperature,
        )

    def update(self, match: Match) -> None:
        self.step(match)

    def step(self, match: Match) -> float:
        if self._largest_team is not None:
            self._grow(match)
        if match.participants is not None:  # P from the rosters, the participants rated
            part_a, part_b = match.participants
            return self._rater.play_with_participants(
                self._book, match.team_a, match.team_b, part_a, part_b, match.winner
            )
        return self._rater.play(self._book, match.team_a, match.team_b, match.winner)

    def set_rating(self, player: str, rating: float) -> None:
        """As a SynElo pool sets: the rating, and the window restarts (C = 1)."""
        rec = self._book.get(player)
        self._book.records[player] = PlayerRecord(
            int(rating), rec.rounds_played, new_window(self.params)
        )

    def reset(self, player: str) -> None:
        if player in self._book.records:
            self._book.records[player] = PlayerRecord(self.params.r0, 0, new_window(self.params))

    def new_season(self, fraction: float | None) -> None:
        """As a SynElo pool starts one (S2): the ratings of every player who is not new
        pulled, their windows restarted."""
        share = DEFAULT_SEASON_FRACTION if fraction is None else check_fraction(fraction)
        params, records = self.params, self._book.records
        moved = {p: r for p, r in records.items() if not is_new_record(r, params)}
        records.update(season_records(moved, share, params))

    def ratings(self) -> dict[str, float]:
        return {player: rec.rating for player, rec in self._book.records.items()}

    def strength_of(self, player: str) -> float | None:
        record = self._book.records.get(player)
        return None if record is None else float(record.rating)

    def inert(self) -> dict[str, str]:
        if self.params.convergence != "revised":
            return {}
        why = "only the seed's F3 uses it (add -p revised=0 to tune it)"
        return {name: why for name in ("w_vel", "w_wre", "w_vol", "wre_scale")}

    def parameters(self) -> dict[str, Any]:
        """The parameters in use, with `revised` and `headcount` as the numbers the options
        take: a pool's export reports its own (the seed's F3 and sums for an old pool), not
        a new history's defaults (`_defaults`)."""
        return {
            **self.params.to_dict(),
            "revised": int(self.params.convergence == "revised"),
            "headcount": int(self.params.uneven == "headcount"),
        }
