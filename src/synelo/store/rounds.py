"""The round path: rating a submitted round, from locking its pool to the journal rows.

`submit_in` rates one round within the caller's write transaction (the round writer rates
a batch in one). It locks the pool, checks the round_id (a retry gets the stored answer),
then rates: `rate_synelo` for a SynElo pool, with the players' convergence windows (kept
decoded in the store's `WindowCache`, or read back from their chunks), and `rate_by_model`
for a pool of another model, with the players' stored states. Both write the players, the
round, its journal rows and the pool's counters, and name the players.

A round takes its locks as every writer does (see `store.core`): the pool first, then its
players in player-key order (`driver_sql.lock_pool`, `lock_players`). Its statements are
`driver_sql`'s plain SQL: this path runs for every round, and through SQLAlchemy's machinery
each statement cost more in Python than the database spent on it (docs/storage.md).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection

from synelo.domain import (
    RatedPlayer,
    RatedRound,
    RoundConflict,
    RoundReport,
    SubmitResult,
    UnknownPool,
    parse_synelo_params,
    pool_params,
    stored_model,
)
from synelo.models import RoundFacts, score_a
from synelo.models.rounds import column_int, rate_with_model, received_extras
from synelo.ratings import PlayerRecord, SynEloParams, apply_change, is_visible, rate_round
from synelo.ratings.synelo import Side, new_window
from synelo.store import driver_sql as sql
from synelo.store import window_codec
from synelo.store.core import Core
from synelo.store.round_record import decode_record, encode_record
from synelo.store.tables import WINDOW_CHUNK
from synelo.store.window_cache import WindowCache


def submit_in(core: Core, conn: Connection, pool_name: str, report: RoundReport) -> SubmitResult:
    """Rate a round within `conn`'s write transaction. A retry with the same content
    gets the outcome recorded when the round was rated; the same round_id with other
    content raises RoundConflict, and an unknown pool UnknownPool, both before anything
    is written."""
    digest = report.content_hash()
    pool, seen = sql.lock_pool(conn, pool_name, report.round_id)
    if pool is None:
        raise UnknownPool(pool_name)
    if seen is not None:
        content_hash, record = seen
        if content_hash != digest:
            raise RoundConflict(report.round_id)
        return SubmitResult(False, decode_record(record))
    if pool.model != "synelo":
        rated = rate_by_model(conn, pool, report, digest, core.clock())
        return SubmitResult(True, rated)
    rated = rate_synelo(
        conn, core.windows, pool, parse_synelo_params(pool.params), report, digest, core.clock()
    )
    return SubmitResult(True, rated)


def rate_by_model(
    conn: Connection,
    pool: sql.LockedPool,
    report: RoundReport,
    digest: str,
    now: datetime,
) -> RatedRound:
    """Rate a round of a pool whose model is not SynElo: its players' states in, the
    model's `rate`, their new states, the round and the journal out."""
    model = stored_model(pool.model, pool.params)
    t_shadow = pool_params(pool.model, pool.params)[0].t_shadow
    seq = pool.rounds + 1
    keys = sorted({*report.team_a, *report.team_b, *report.participants_a, *report.participants_b})
    stored = {row[1]: row for row in sql.lock_states(conn, pool.id, keys)}
    states = {
        key: model.decode(orjson.loads(row[4]) if row[4] else {}) for key, row in stored.items()
    }
    facts = RoundFacts(
        report.team_a,
        report.team_b,
        report.winner,
        report.participants_a,
        report.participants_b,
        received_extras(report.extras, report.map, now),
    )
    entries = sql.read_context(conn, pool.id, model.context_keys(facts))
    outcome = rate_with_model(model, states, facts, entries)
    p_a, s_a = outcome.p_a, score_a(report.winner)
    new_display = column_int(model.rating(model.new_state()))

    stamp = sql.timestamp(conn, now)
    played = sql.timestamp(conn, report.played_at(now) or now)  # the players' last_played
    ids = {key: row[0] for key, row in stored.items()}
    new = list(dict.fromkeys(key for key, _ in facts.rated() if key not in ids))
    ids.update(sql.insert_players(conn, pool.id, new, new_display))
    changes = [
        (key, side, before, after, (stored[key][2] if key in stored else 0) + 1)
        for key, side, before, after in outcome.changes
    ]
    rated = RatedRound(
        report.round_id,
        seq,
        report.winner,
        p_a,
        outcome.sum_a,
        outcome.sum_b,
        tuple(
            RatedPlayer(key, side, before, after, after - before, None, rounds >= t_shadow, rounds)
            for key, side, before, after, rounds in changes
        ),
    )
    round_row = _round_row(conn, pool.id, report, rated, digest, now)
    round_pk = int(sql.INSERT_ROUND.scalar(conn, round_row))
    journal_ids = sql.insert_journal(
        conn,
        [
            (
                pool.id,
                ids[key],
                round_pk,
                side,
                before,
                after,
                None,
                p_a if side == "A" else 1.0 - p_a,
                s_a if side == "A" else 1.0 - s_a,
                stamp,
                stored[key][3] if key in stored else None,
                pool.generation,
            )
            for key, side, before, after, _ in changes
        ],
    )
    sql.UPDATE_STATE.many(
        conn,
        [
            (
                after,
                rounds,
                played,
                orjson.dumps(model.encode(outcome.states[key])).decode(),
                journal_ids[ids[key]],
                ids[key],
            )
            for key, _, _, after, rounds in changes
        ],
    )
    sql.save_context(conn, pool.id, outcome.context)
    sql.COUNT_ROUND.run(conn, (seq, (p_a - s_a) ** 2, pool.id))
    sql.save_names(conn, pool.id, report.extras.get("names", {}))
    return rated


def rate_synelo(
    conn: Connection,
    windows: WindowCache,
    pool: sql.LockedPool,
    params: SynEloParams,
    report: RoundReport,
    digest: str,
    now: datetime,
) -> RatedRound:
    """Read the players, rate with the pure math, write players, round and journal."""
    pool_id, seq = pool.id, pool.rounds + 1
    keys = sorted({*report.team_a, *report.team_b, *report.participants_a, *report.participants_b})
    stored = {row.key: row for row in sql.lock_players(conn, pool_id, keys)}

    def rating(key: str) -> int:
        row = stored.get(key)
        return row.rating if row is not None else params.r0

    sides: tuple[tuple[Side, tuple[str, ...]], ...] = (
        ("A", report.participants_a),
        ("B", report.participants_b),
    )
    participants = [(key, side) for side, on_side in sides for key in on_side]
    known = [stored[key] for key, _ in participants if key in stored]
    # a window cached at an older stamp (another worker rated the player since) is
    # brought up to date from the rows written since, not read back whole
    hits, stale = windows.get_or_stale({row.id: row.last_journal for row in known})
    missing = [row for row in known if row.id not in hits]
    revised = params.convergence == "revised"  # the F3 whose sums the windows keep
    loaded = (
        sql.windows(conn, missing, WINDOW_CHUNK, params.window, revised, stale) if missing else {}
    )

    records: dict[str, PlayerRecord] = {}
    for key, _ in participants:
        row = stored.get(key)
        if row is None:
            records[key] = PlayerRecord(params.r0, 0, new_window(params))
        elif row.id in hits:
            records[key] = PlayerRecord(row.rating, row.rounds_played, *hits[row.id])
        else:
            records[key] = PlayerRecord(
                row.rating, row.rounds_played, loaded[row.id], row.convergence
            )
    outcome = rate_round(
        map(rating, report.team_a),
        map(rating, report.team_b),
        [(key, side, records[key]) for key, side in participants],
        report.winner,
        params,
    )

    ids = {key: row.id for key, row in stored.items()}
    last = {row.id: row.last_journal for row in stored.values()}
    new = list(dict.fromkeys(c.player for c in outcome.changes if c.player not in ids))
    ids.update(sql.insert_players(conn, pool_id, new, params.r0))
    rated = RatedRound(
        report.round_id,
        seq,
        report.winner,
        outcome.p_a,
        outcome.sum_a,
        outcome.sum_b,
        tuple(
            [
                RatedPlayer(
                    c.player,
                    c.side,
                    c.before,
                    c.after,
                    c.delta,
                    c.k,
                    is_visible(c.rounds_played, params),
                    c.rounds_played,
                )
                for c in outcome.changes
            ]
        ),
    )
    written, chunks, dropped = [], [], []
    for change in outcome.changes:
        rec = records[change.player]
        apply_change(rec, change)
        pid = ids[change.player]
        win = rec.window
        written.append(
            sql.PlayerWrite(
                pid,
                change.side,
                change.before,
                change.after,
                change.k,
                change.p,
                change.s,
                last.get(pid),
                rec.rating,
                rec.rounds_played,
                rec.current_convergence(params),
                win.appended,
            )
        )
        if win.appended % WINDOW_CHUNK == 0:  # the newest chunk is complete: store it
            newest = window_codec.chunk_of_newest(win, WINDOW_CHUNK)
            chunks.append((pid, newest, window_codec.chunk_bytes(win, newest, WINDOW_CHUNK)))
            oldest = window_codec.oldest_chunk(win, WINDOW_CHUNK)
            if oldest:
                dropped.append((pid, oldest))
    _, journal_ids = sql.write_round(
        conn,
        _round_row(conn, pool_id, report, rated, digest, now),
        pool.generation,
        written,
        outcome.brier_term(report.winner),
    )
    windows.put_many(
        [
            (w.player_id, journal_ids[w.player_id], records[key].window, w.convergence)
            for key, w in zip((c.player for c in outcome.changes), written, strict=True)
        ]
    )
    if chunks:
        sql.SAVE_CHUNK.many(conn, chunks)
    if dropped:
        sql.DROP_CHUNKS_BEFORE.many(conn, dropped)
    sql.save_names(conn, pool_id, report.extras.get("names", {}))
    return rated


def _round_row(
    conn: Connection,
    pool_id: int,
    report: RoundReport,
    rated: RatedRound,
    digest: str,
    now: datetime,
) -> tuple[Any, ...]:
    """A rated round's row, in `INSERT_ROUND`'s order: the outcome's record, received
    `now`, the whole report and when it was played (`RoundReport.played_at`)."""
    played = report.played_at(now)
    return (
        pool_id,
        rated.seq,
        report.round_id,
        report.server_id,
        report.map,
        report.winner,
        rated.sum_a,
        rated.sum_b,
        rated.p_a,
        digest,
        encode_record(rated),
        sql.timestamp(conn, now),
        orjson.dumps(report.stored()).decode(),
        None if played is None else sql.timestamp(conn, played),
    )
