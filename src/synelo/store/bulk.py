"""Many rows written at once, as a re-rate writes a whole pool: COPY on PostgreSQL, one
prepared statement run for every row on SQLite, both on the driver's own cursor (through
SQLAlchemy's result machinery, tens of thousands of rows cost more than the database's
work)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection


def bulk_insert(
    conn: Connection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert many rows: COPY on PostgreSQL, one prepared INSERT on SQLite."""
    if conn.dialect.name == "sqlite":
        marks = ", ".join("?" * len(columns))
        stmt = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        conn.connection.cursor().executemany(stmt, rows)
        return
    cur: Any = conn.connection.cursor()
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def bulk_update(
    conn: Connection, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """UPDATE table SET columns… WHERE id = … for many rows (each row: the values, then
    the id): a prepared UPDATE on SQLite; on PostgreSQL, COPY into a temporary table and
    one UPDATE … FROM it."""
    if not rows:
        return
    if conn.dialect.name == "sqlite":
        sets = ", ".join(f"{c} = ?" for c in columns)
        conn.connection.cursor().executemany(f"UPDATE {table} SET {sets} WHERE id = ?", rows)
        return
    staged = f"staged_{table}"
    conn.exec_driver_sql(
        f"CREATE TEMPORARY TABLE {staged} ON COMMIT DROP AS "
        f"SELECT {', '.join(columns)}, id FROM {table} WITH NO DATA"
    )
    bulk_insert(conn, staged, [*columns, "id"], rows)
    sets = ", ".join(f"{c} = {staged}.{c}" for c in columns)
    conn.exec_driver_sql(f"UPDATE {table} SET {sets} FROM {staged} WHERE {table}.id = {staged}.id")
    conn.exec_driver_sql(f"DROP TABLE {staged}")
