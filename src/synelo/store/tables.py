"""The schema. Alembic's migrations create exactly these tables (checked by a test)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ColumnElement,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
    func,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

metadata = MetaData()


class UtcDateTime(TypeDecorator[datetime]):
    """Timestamps are aware UTC datetimes in Python, whatever the database keeps."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# A BIGINT primary key that SQLite still treats as its rowid alias.
Id = BigInteger().with_variant(Integer, "sqlite")

pools = Table(
    "pools",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False, unique=True),
    Column("kmax", Integer, nullable=False),  # the largest team size (Pool.team_size)
    Column("player_ids", String(8), nullable=False),  # "steam" or "text"
    # the rating model (synelo.models) and its parameters as JSON: SynEloParams for "synelo";
    # for any other model, its own parameters with the pool's t_shadow and t_stale_days
    Column("model", String(32), nullable=False, server_default="synelo"),
    Column("params", Text, nullable=False),
    Column("rounds", BigInteger, nullable=False, default=0),  # rounds rated = last seq
    Column("brier_sum", Float, nullable=False, default=0.0),  # F6 running Σ(P_A − O_A)²
    Column("created_at", UtcDateTime(), nullable=False),
    # the journal generation in force: a re-rate writes the next one, then swaps (0006)
    Column("generation", BigInteger, nullable=False, server_default="0"),
    Column("voided", BigInteger, nullable=False, server_default="0"),  # rounds voided
    Column("autotune", Text, nullable=True),  # the auto-tuning setting (JSON); NULL: off
    # whether anyone may read the pool's public endpoints, without a token (0008)
    Column("public", Boolean, nullable=False, server_default=false()),
)

# What a pool's model learns beside its players (Model.context_keys), one JSON value an
# entry (0007).
pool_context = Table(
    "pool_context",
    metadata,
    Column("pool_id", ForeignKey("pools.id", ondelete="CASCADE"), primary_key=True),
    Column("entry", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

players = Table(
    "players",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("pool_id", ForeignKey("pools.id", ondelete="CASCADE"), nullable=False),
    Column("player_key", String(64), nullable=False),  # SteamID64 or text id
    Column("rating", Integer, nullable=False),
    Column("rounds_played", Integer, nullable=False),
    Column("last_played", UtcDateTime(), nullable=True),
    Column("convergence", Float, nullable=False),  # F3's C for the next round
    # The convergence window: its full chunks are in window_chunks, and the entries of its
    # unfilled newest chunk are the player's newest `window_appended % WINDOW_CHUNK` journal
    # rows (after, P, S), read back along the journal chain when the window is not cached.
    # `window_appended`: entries appended since the window (re)started; None for a row last
    # written before migration 0003, whose window is still in the two columns before it:
    # window_codec.header_bytes (sums, count, `appended`) and the unfilled newest chunk
    # (window_codec.chunk_bytes; None once full). Neither: an empty window.
    Column("window_state", LargeBinary, nullable=True),
    Column("window_tail", LargeBinary, nullable=True),
    Column("window_appended", BigInteger, nullable=True),
    Column("last_journal", BigInteger, nullable=True),  # newest journal row (see journal)
    # the player's state in a model other than SynElo (Model.encode's JSON); NULL: a new
    # player, or a SynElo pool's player, whose state is `rating`, the window and its columns
    Column("state", Text, nullable=True),
    # the display name last reported (a round's `names`, a lookup's); it never identifies
    Column("name", String(64), nullable=True),
    # an admin hid the player from every public list (0008); their rating still counts
    Column("hidden", Boolean, nullable=False, server_default=false()),
    UniqueConstraint("pool_id", "player_key", name="uq_players_pool_key"),
)

# A player's full convergence-window chunks, WINDOW_CHUNK entries per row by entry number
# (entry t in chunk t // WINDOW_CHUNK). A rated round writes no window bytes: every
# WINDOW_CHUNK rounds the chunk just filled is written here, and chunks that left the window
# are deleted then.
WINDOW_CHUNK = 50
window_chunks = Table(
    "window_chunks",
    metadata,
    Column("player_id", ForeignKey("players.id", ondelete="CASCADE"), primary_key=True),
    Column("chunk", BigInteger, primary_key=True, autoincrement=False),
    Column("data", LargeBinary, nullable=False),  # window_codec.chunk_bytes
)

rounds = Table(
    "rounds",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("pool_id", ForeignKey("pools.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger, nullable=False),  # 1, 2, 3… per pool, in rating order
    Column("round_id", String(128), nullable=False),
    Column("server_id", String(128), nullable=False),
    Column("map", String(128), nullable=False),
    Column("winner", String(4), nullable=False),
    Column("sum_a", Integer, nullable=False),
    Column("sum_b", Integer, nullable=False),
    Column("p_a", Float, nullable=False),
    Column("content_hash", String(64), nullable=False),
    # the store's record of the rated round (round_record.py), decoded for a retry
    Column("result", Text, nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    # the report as it was sent, every field (RoundReport.stored), as JSON: the source of
    # truth for re-rating. NULL for rounds stored before it was kept (migration 0004), whose
    # rosters are unknown: their participants stand in for them.
    Column("report", Text, nullable=True),
    # taken out of the ratings by an admin (kept, and put back by an unvoid)
    Column("voided", Boolean, nullable=False, server_default=false()),
    # when it was played, as its report says: ended_at, else started_at; NULL when it says
    # neither, and `created_at` dates it (`round_time`; migration 0012)
    Column("played_at", UtcDateTime(), nullable=True),
    UniqueConstraint("pool_id", "round_id", name="uq_rounds_pool_round_id"),
    UniqueConstraint("pool_id", "seq", name="uq_rounds_pool_seq"),
    # what the health figures and the quality endpoint read of every round (migration 0009)
    Index(
        "ix_rounds_figures",
        "pool_id",
        "voided",
        "seq",
        "p_a",
        "winner",
        "sum_a",
        "sum_b",
        "created_at",
        "played_at",
    ),
)


def round_time() -> ColumnElement[datetime]:
    """When a round was played: its report's own time (`played_at`: ended_at, else
    started_at), else when it was received. Every page and answer that dates a round
    reads this, so an imported history shows on the days it was played."""
    return func.coalesce(rounds.c.played_at, rounds.c.created_at, type_=UtcDateTime())


# One row per rated player per round and per admin change. A player's rows form a chain,
# newest first: players.last_journal → prev_id → prev_id … Walking it reads a player's history
# by primary key, so the journal needs no (player, id) index, whose random inserts (24 per
# 12v12 round) would be the most expensive write of a round.
journal = Table(
    "journal",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    # pools.id, players.id and rounds.id, without foreign keys (migration 0006): only the
    # store writes the journal, holding the rows it refers to, and their checks cost a
    # re-rate's bulk writes three quarters of their time on PostgreSQL
    Column("pool_id", Id, nullable=False),
    Column("player_id", Id, nullable=False),
    Column("round_pk", Id, nullable=True),
    Column("kind", String(8), nullable=False),  # "round", "set", "reset", "solve" or "season"
    Column("team", String(1), nullable=True),
    Column("before", Integer, nullable=False),
    Column("after", Integer, nullable=False),
    Column("k", Float, nullable=True),
    Column("p", Float, nullable=True),
    Column("s", Float, nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("prev_id", BigInteger, nullable=True),  # this player's previous journal row
    # the pool's generation this row belongs to: only pools.generation's rows are in force
    Column("generation", BigInteger, nullable=False, server_default="0"),
    Index("ix_journal_round", "round_pk"),
)

# A pool's admin log, in the order it was made: sets, resets, voids, unvoids, seasons and
# changes of model or parameters, each with who made it and why. `seq` is the number of
# rounds the pool had rated then: a re-rate applies a set, reset or season after round
# `seq`, before the next.
changes = Table(
    "changes",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("pool_id", ForeignKey("pools.id", ondelete="CASCADE"), nullable=False),
    Column("seq", BigInteger, nullable=False),
    # set, reset, void, unvoid, patch, tune, refit, hide, rename, season
    Column("kind", String(8), nullable=False),
    Column("player_key", String(64), nullable=True),  # set, reset
    Column("round_id", String(128), nullable=True),  # void, unvoid
    # JSON: {"rating"}, {"model", "params"}, a season's {"fraction"} or {"default"}…
    Column("value", Text, nullable=True),
    Column("actor", String(64), nullable=False),  # the token that made it
    Column("reason", String(500), nullable=True),
    Column("created_at", UtcDateTime(), nullable=False),
    Index("ix_changes_pool", "pool_id", "seq", "id"),
)

# Background re-rates: one running per pool. `updated_at` is the runner's heartbeat; a
# running job whose heartbeat stopped (its process died) counts as failed.
jobs = Table(
    "jobs",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("pool_id", ForeignKey("pools.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(8), nullable=False),  # patch, void, unvoid, tune, refit, advise
    Column("spec", Text, nullable=False),  # JSON: what the re-rate changes
    # running, done, failed, cancelled (an advise job an admin stopped: 0014)
    Column("status", String(16), nullable=False),
    Column("phase", String(16), nullable=False),
    Column("total", BigInteger, nullable=False),  # rounds to rate
    Column("done", BigInteger, nullable=False),
    Column("error", Text, nullable=True),
    Column("actor", String(64), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("updated_at", UtcDateTime(), nullable=False),
    Column("finished_at", UtcDateTime(), nullable=True),
    # the process running the job (store.jobs.ProcessId); NULL: unknown, the heartbeat's
    # word alone (0011)
    Column("process", String(200), nullable=True),
    Index("ix_jobs_pool", "pool_id", "status"),
)

api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("role", String(8), nullable=False),  # "admin" or "server"
    Column("token_hash", String(64), nullable=False, unique=True),  # sha256 hex
    Column("label", String(64), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    # the pools a server token may use, a JSON list of names; NULL: every pool (0010)
    Column("pools", Text, nullable=True),
    # when it was last used, to the minute (store.tokens.use_token); NULL: not yet (0013)
    Column("last_used_at", UtcDateTime(), nullable=True),
)

# The pages' admin logins (synelo.service.pages.admin): the cookie itself is never stored, only its
# SHA-256; `token_hash` is the admin token it was opened with, checked on every use so that
# revoking the token ends the session.
sessions = Table(
    "sessions",
    metadata,
    Column("id", Id, primary_key=True, autoincrement=True),
    Column("session_hash", String(64), nullable=False, unique=True),
    Column("csrf", String(64), nullable=False),  # the form token of every page form
    Column("actor", String(64), nullable=False),  # who, as the change log names them
    Column("token_hash", String(64), nullable=False),
    Column("created_at", UtcDateTime(), nullable=False),
    Column("expires_at", UtcDateTime(), nullable=False),
    Index("ix_sessions_expires", "expires_at"),
)
