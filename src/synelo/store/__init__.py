"""Persistence, behind `repository.Store`: one module per concept (the round path in `rounds`,
pools, players, the journal, leaderboards, tokens…), the tables, the engine and its Alembic
migrations. Nothing here builds an HTTP answer."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "admin_log",
    "backup",
    "board",
    "bulk",
    "checkpoint",
    "core",
    "driver_sql",
    "engine",
    "generations",
    "health",
    "jobs",
    "journal",
    "leaderboards",
    "players",
    "pools",
    "quality",
    "repository",
    "round_record",
    "round_views",
    "rounds",
    "rows",
    "sessions",
    "tables",
    "tokens",
    "window_cache",
    "window_codec",
    "writer",
]
