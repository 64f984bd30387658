"""Stored rounds as the pages show them: one round with its players' changes, the newest
rosters, the voided rounds a player was in, round ids by row id, where rounds were played
(server, map, sides) and a server's newest rounds. (Rating a round is `store.rounds`'.)"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import orjson
from sqlalchemy import select, true

from synelo.domain import Pool, RoundView, VoidedRound
from synelo.store.core import Core
from synelo.store.tables import journal, players, round_time, rounds


def round_view(core: Core, pool: Pool, round_id: str) -> RoundView | None:
    """A round of the pool by its round_id, with its players' changes (None: unknown)."""
    with core.snapshot_read() as conn:
        pool = core.pool_by_id(conn, pool)
        row = conn.execute(
            select(
                rounds.c.id,
                rounds.c.seq,
                rounds.c.winner,
                rounds.c.p_a,
                rounds.c.voided,
                round_time().label("at"),
                rounds.c.map,
                rounds.c.report,
            ).where(rounds.c.pool_id == pool.id, rounds.c.round_id == round_id)
        ).first()
        if row is None:
            return None
        changed = conn.execute(
            select(
                players.c.player_key,
                journal.c.team,
                journal.c.before,
                journal.c.after,
                players.c.hidden,
                players.c.name,
                players.c.rounds_played,
            )
            .join(players, players.c.id == journal.c.player_id)
            .where(journal.c.round_pk == row.id, journal.c.generation == pool.generation)
            .order_by(journal.c.team, journal.c.id)
        ).all()
        report = orjson.loads(row.report) if row.report else {}
        teams = report.get("teams") or report.get("participants") or {"A": [], "B": []}
        named = {
            str(p)
            for group in (teams, report.get("participants") or {})
            for side in ("A", "B")
            for p in group.get(side, ())
        } | {r.player_key for r in changed}
        now_known = conn.execute(
            select(players.c.player_key, players.c.hidden, players.c.rounds_played).where(
                players.c.pool_id == pool.id, players.c.player_key.in_(sorted(named))
            )
        ).all()
    names = {r.player_key: r.name for r in changed if r.name}
    names.update(report.get("names") or {})
    return RoundView(
        round_id,
        int(row.seq),
        row.winner,
        float(row.p_a),
        bool(row.voided),
        row.at,
        row.map,
        tuple(str(p) for p in teams["A"]),
        tuple(str(p) for p in teams["B"]),
        names,
        tuple((r.player_key, r.team, int(r.before), int(r.after)) for r in changed),
        frozenset(r.player_key for r in now_known if r.hidden),
        frozenset(r.player_key for r in now_known if r.rounds_played < pool.params.t_shadow)
        | (named - {r.player_key for r in now_known}),  # never rated: nothing to show
    )


def recent_rosters(
    core: Core, pool: Pool, limit: int
) -> list[tuple[str, datetime, str, tuple[str, ...], tuple[str, ...]]]:
    """The pool's newest rounds, newest first, as (round_id, when played, map, team A,
    team B) from their reports: the players a scramble viewer can pick from."""
    with core.read() as conn:
        found = conn.execute(
            select(rounds.c.round_id, round_time(), rounds.c.map, rounds.c.report)
            .where(rounds.c.pool_id == pool.id)
            .order_by(rounds.c.seq.desc())
            .limit(limit)
        ).all()
    out = []
    for round_id, at, map_name, report in found:
        stored = orjson.loads(report) if report else {}
        teams = stored.get("teams") or stored.get("participants") or {}
        a, b = (tuple(str(p) for p in teams.get(side, ())) for side in ("A", "B"))
        out.append((str(round_id), at, str(map_name), a, b))
    return out


def voided_rounds_of(core: Core, pool: Pool, key: str) -> list[VoidedRound]:
    """The pool's voided rounds that the player was in, in rating order: a void leaves
    no journal row, so a player's chart marks them from here."""
    with core.read() as conn:
        found = conn.execute(
            select(rounds.c.id, rounds.c.round_id, rounds.c.report)
            .where(rounds.c.pool_id == pool.id, rounds.c.voided == true())
            .order_by(rounds.c.seq)
        ).all()
    out = []
    for pk, round_id, report in found:
        stored = orjson.loads(report) if report else {}
        groups = (stored.get("teams") or {}, stored.get("participants") or {})
        if any(key in map(str, g.get(side, ())) for g in groups for side in ("A", "B")):
            out.append(VoidedRound(int(pk), str(round_id)))
    return out


def round_ids(core: Core, pool: Pool, pks: Sequence[int]) -> dict[int, str]:
    """The round_id of each of the pool's round rows `pks`."""
    if not pks:
        return {}
    with core.read() as conn:
        rows = conn.execute(
            select(rounds.c.id, rounds.c.round_id).where(
                rounds.c.pool_id == pool.id, rounds.c.id.in_(list(pks))
            )
        )
        return {int(pk): str(rid) for pk, rid in rows}


@dataclass(frozen=True, slots=True)
class RoundSite:
    """Where a round was played and as what: its server, its map, and the sides its teams
    played as the game names them (RED and BLU: A's, then B's), when the report says."""

    server_id: str
    map: str
    sides: tuple[str, str] | None


def round_sites(core: Core, pool: Pool, round_ids: Sequence[str]) -> dict[str, RoundSite]:
    """The server, map and side names of the pool's rounds `round_ids`, by round id."""
    if not round_ids:
        return {}
    with core.read() as conn:
        rows = conn.execute(
            select(rounds.c.round_id, rounds.c.server_id, rounds.c.map, rounds.c.report).where(
                rounds.c.pool_id == pool.id, rounds.c.round_id.in_(sorted(set(round_ids)))
            )
        ).all()
    out = {}
    for round_id, server_id, map_name, report in rows:
        sides = (orjson.loads(report) if report else {}).get("sides") or {}
        named = (str(sides["A"]), str(sides["B"])) if "A" in sides and "B" in sides else None
        out[str(round_id)] = RoundSite(str(server_id), str(map_name), named)
    return out


@dataclass(frozen=True, slots=True)
class ServerRound:
    """One of a server's rounds as its page lists it."""

    round_id: str
    seq: int
    at: datetime
    map: str
    winner: str
    p_a: float
    voided: bool


def server_rounds(core: Core, pool: Pool, server_id: str, limit: int) -> list[ServerRound]:
    """The newest `limit` rounds a server reported to the pool, newest first, each dated
    by when it was played (`round_time`)."""
    with core.read() as conn:
        rows = conn.execute(
            select(
                rounds.c.round_id,
                rounds.c.seq,
                round_time(),
                rounds.c.map,
                rounds.c.winner,
                rounds.c.p_a,
                rounds.c.voided,
            )
            .where(rounds.c.pool_id == pool.id, rounds.c.server_id == server_id)
            .order_by(rounds.c.seq.desc())
            .limit(limit)
        ).all()
    return [ServerRound(*r) for r in rows]
