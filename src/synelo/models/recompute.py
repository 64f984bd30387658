"""The recompute: a pool's rounds and admin sets, resets and seasons, in order, through its
model.

Pure: the caller reads the rounds and changes and writes what comes out. Each round is rated
exactly as the live service rates it (SynElo through `rate_round` and `apply_change`, any
other model through `rate_with_model`, which the live path calls too), so that re-rating with
the pool's own model and parameters gives back every stored rating, and a re-rate with new
ones equals a fresh pool fed the same rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NamedTuple

from synelo.models.base import Model, RoundError, RoundFacts, SeasonMark, new_season, score_a
from synelo.models.rounds import column_int, rate_with_model
from synelo.ratings import PlayerRecord, SynEloParams, apply_change, new_window, rate_round


@dataclass(frozen=True, slots=True)
class RoundEvent:
    """A stored round to rate: its row, its place, its report, when it was rated (`at`, its
    journal rows' time) and when it was played (`played`, its players' last_played)."""

    pk: int
    seq: int
    facts: RoundFacts
    at: datetime
    played: datetime


@dataclass(frozen=True, slots=True)
class AdminIn:
    """An admin set (to `rating`) or reset of one player, or a new season of the pool (the
    `fraction` it names, None for the model's default), as the change log keeps it."""

    kind: Literal["set", "reset", "season"]
    player: str
    rating: int | None
    at: datetime
    fraction: float | None = None


class JournalLine(NamedTuple):
    """One journal row of the recompute (round_pk None for a set, reset or season)."""

    player: str
    round_pk: int | None
    kind: str
    team: str | None
    before: int
    after: int
    k: float | None
    p: float | None
    s: float | None
    at: datetime


class RoundLine(NamedTuple):
    """A round's new P_A and round-start sums."""

    pk: int
    p_a: float
    sum_a: int
    sum_b: int


@dataclass(slots=True)
class PlayerState:
    """A player after the recompute: the players row's columns, and the model's state (a
    PlayerRecord in a SynElo pool)."""

    rating: int
    rounds_played: int
    last_played: datetime | None
    state: Any


class Recompute:
    """Rates rounds and applies admin changes in the order given, keeping every player's
    state in memory; `players` is the result. `synelo` is a SynElo pool's parameters (None
    for another model, rated by `model`)."""

    def __init__(self, model: Model[Any], synelo: SynEloParams | None, refit: bool = False) -> None:
        self.model = model
        self.synelo = synelo
        self.players: dict[str, PlayerState] = {}
        self.brier_sum = 0.0
        self.context: dict[str, Any] = {}  # the pool's context entries (Model.context_keys)
        self.rated: list[RoundFacts] = []  # the rounds rated, for a refit at the end
        self.refitting = synelo is None and (model.refits() or (refit and model.can_refit()))
        # a player an admin set or reset is a new identity to the refit: their earlier rounds
        # come under the name of their generation, and `starts` holds what they restarted as
        self.generation: dict[str, int] = {}
        self.starts: dict[str, Any] = {}
        self.seasons: list[SeasonMark] = []  # where seasons fell among `rated`, for the refit

    def new_player(self) -> PlayerState:
        if self.synelo is not None:
            return PlayerState(self.synelo.r0, 0, None, self.new_record())
        state = self.model.new_state()
        return PlayerState(column_int(self.model.rating(state)), 0, None, state)

    def new_record(self) -> PlayerRecord:
        assert self.synelo is not None
        return PlayerRecord(self.synelo.r0, 0, new_window(self.synelo))

    def round(self, r: RoundEvent) -> tuple[RoundLine, list[JournalLine]]:
        """Rate one round (F1–F5 for SynElo; the model's `rate` otherwise)."""
        facts, players = r.facts, self.players
        s_a = score_a(facts.winner)
        lines: list[JournalLine] = []
        if self.synelo is not None:
            params = self.synelo
            r0 = params.r0
            sum_a = [players[p].rating if p in players else r0 for p in facts.team_a]
            sum_b = [players[p].rating if p in players else r0 for p in facts.team_b]
            participants = []
            for key, side in facts.rated():
                player = players.get(key)
                if player is None:  # new: R_0 and an empty window, as the live path reads it
                    player = players[key] = PlayerState(r0, 0, None, self.new_record())
                participants.append((key, side, player.state))
            outcome = rate_round(sum_a, sum_b, participants, facts.winner, params)
            for c in outcome.changes:
                player = players[c.player]
                rec = player.state
                apply_change(rec, c)
                rec.current_convergence(params)
                player.rating, player.rounds_played, player.last_played = (
                    rec.rating,
                    rec.rounds_played,
                    r.played,
                )
                lines.append(
                    JournalLine(
                        c.player, r.pk, "round", c.side, c.before, c.after, c.k, c.p, c.s, r.at
                    )
                )
            self.brier_sum += outcome.brier_term(facts.winner)
            return RoundLine(r.pk, outcome.p_a, outcome.sum_a, outcome.sum_b), lines
        states = {key: players[key].state for key in _keys(facts) if key in players}
        entries = {k: self.context[k] for k in self.model.context_keys(facts) if k in self.context}
        try:
            rated = rate_with_model(self.model, states, facts, entries)
        except RoundError as exc:  # a stored round this model cannot rate: the job fails
            raise RoundError(exc.field, f"round #{r.seq}: {exc.message}") from None
        self.context.update(rated.context)
        if self.refitting:
            self.rated.append(self._as_generations(facts))
        p_a = rated.p_a
        for key, side, before, after in rated.changes:
            player = players.get(key)
            if player is None:
                player = players[key] = self.new_player()
            player.state = rated.states[key]
            player.rating, player.last_played = after, r.played
            player.rounds_played += 1
            p, s = (p_a, s_a) if side == "A" else (1.0 - p_a, 1.0 - s_a)
            lines.append(JournalLine(key, r.pk, "round", side, before, after, None, p, s, r.at))
        self.brier_sum += (p_a - s_a) ** 2
        return RoundLine(r.pk, p_a, rated.sum_a, rated.sum_b), lines

    def refit(self, at: datetime) -> list[JournalLine]:
        """The model's full-history fit over every round rated (`Model.refit`, e.g. Hive's
        H8 when its pool asks for it): a "solve" journal line for each player whose
        display rating it moves."""
        if not self.refitting:
            return []
        name = self._generation_name
        states = {name(key): player.state for key, player in self.players.items()}
        starts = {name(key): state for key, state in self.starts.items()}
        fitted = self.model.refit(states, self.rated, self.context, starts, self.seasons)
        if fitted is None:
            return []
        self.context.update(fitted.context)
        current = {name(key): key for key in self.players}
        lines: list[JournalLine] = []
        for fitted_key, state in sorted(fitted.states.items()):
            key = current.get(fitted_key)
            if key is None:  # an identity an admin change ended
                continue
            player = self.players[key]
            before, player.state = player.rating, state
            player.rating = column_int(self.model.rating(state))
            if player.rating != before:
                lines.append(
                    JournalLine(
                        key, None, "solve", None, before, player.rating, None, None, None, at
                    )
                )
        return lines

    def _generation_name(self, key: str) -> str:
        """The name a player's current identity has in the refit (W10's PlayerDays)."""
        generation = self.generation.get(key, 0)
        return key if generation == 0 else f"{key}\x1f{generation}"

    def _as_generations(self, facts: RoundFacts) -> RoundFacts:
        """The round with each player under their current generation's name."""
        if not self.generation:
            return facts
        name = self._generation_name

        def names(players: tuple[str, ...] | None) -> tuple[str, ...] | None:
            return None if players is None else tuple(name(p) for p in players)

        return RoundFacts(
            tuple(name(p) for p in facts.team_a),
            tuple(name(p) for p in facts.team_b),
            facts.winner,
            names(facts.participants_a),
            names(facts.participants_b),
            facts.extras,
        )

    def _restarted(self, key: str, state: Any) -> None:
        """An admin change made `key` start again as `state` (a refit's new identity)."""
        if self.refitting and self.model.restarts_identities:
            self.generation[key] = self.generation.get(key, 0) + 1
            self.starts[key] = state

    def change(self, change: AdminIn) -> list[JournalLine]:
        """Apply an admin change as the live service does (`admin` or `season`): its journal
        rows."""
        if change.kind == "season":
            return self.season(change.fraction, change.at)
        line = self.admin(change)
        return [] if line is None else [line]

    def season(self, fraction: float | None, at: datetime) -> list[JournalLine]:
        """A new season (`models.base.new_season`: the model's S1–S7 for every player who is
        not new): a "season" journal row for each player it moved, in key order, even where
        the display rating stayed (SynElo's window restarted all the same)."""
        states = {key: player.state for key, player in self.players.items()}
        season = new_season(self.model, states, fraction, self.context)
        self.context.update(season.context)
        if self.refitting:
            self.seasons.append((len(self.rated), season.fraction))
        lines: list[JournalLine] = []
        for key in sorted(season.states):
            player = self.players[key]
            before, player.state = player.rating, season.states[key]
            player.rating = column_int(self.model.rating(player.state))
            lines.append(
                JournalLine(key, None, "season", None, before, player.rating, None, None, None, at)
            )
        return lines

    def admin(self, change: AdminIn) -> JournalLine | None:
        """Apply a set or reset as the live service does: a set moves the rating and, in
        SynElo, restarts the window (C = 1); a reset makes the player new again (0 rounds,
        never played). A reset of a player not seen yet changes nothing (None)."""
        player = self.players.get(change.player)
        if change.kind == "reset":
            if player is None:
                return None
            fresh = self.new_player()
            line = JournalLine(
                change.player,
                None,
                "reset",
                None,
                player.rating,
                fresh.rating,
                None,
                None,
                None,
                change.at,
            )
            self.players[change.player] = fresh
            self._restarted(change.player, fresh.state)
            return line
        assert change.rating is not None
        if player is None:
            player = self.players[change.player] = self.new_player()
        before = player.rating
        if self.synelo is not None:
            player.state = PlayerRecord(
                change.rating, player.rounds_played, new_window(self.synelo)
            )
            player.rating = change.rating
        else:
            player.state = self.model.with_rating(player.state, change.rating)
            player.rating = column_int(self.model.rating(player.state))
            self._restarted(change.player, player.state)
        return JournalLine(
            change.player, None, "set", None, before, player.rating, None, None, None, change.at
        )


def _keys(facts: RoundFacts) -> set[str]:
    return {*facts.team_a, *facts.team_b, *facts.rated_a, *facts.rated_b}
