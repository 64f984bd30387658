"""Operators' commands: token files and the data folder kept private, and known to the
database they are used with, `synelo token list` and `revoke`, and `synelo backup` /
`restore` on both databases (issues 16 and 37)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from synelo.config import Settings
from synelo.domain import RoundReport
from synelo.ratings import SynEloParams
from synelo.service.app import create_app
from synelo.store.engine import create_store_engine, migrate
from synelo.store.repository import Store
from synelo.store.tokens import hash_token
from tests.conftest import own_pg_schema, serving, steam
from tests.integration.test_cli import run

COUNTED = ("pools", "players", "rounds", "journal", "changes", "window_chunks")


def _report(n: int) -> RoundReport:
    a = tuple(steam(1 + (n + i) % 12) for i in range(0, 6, 2))
    b = tuple(steam(1 + (n + i) % 12) for i in range(1, 6, 2))
    return RoundReport(f"r{n}", "s", "m", "A" if n % 3 else "B", a, b, a, b)


def _counts(url: str) -> dict[str, int]:
    engine = create_store_engine(url, pool_size=1)
    try:
        with engine.connect() as conn:
            return {
                t: conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one() for t in COUNTED
            }
    finally:
        engine.dispose()


def test_token_files_and_the_data_folder_are_private_even_if_they_existed(tmp_path: Path) -> None:
    """init wrote a new admin token into an existing world-readable file (the probe's 0644);
    token files are 0600 and the data folder 0700 whatever was there before."""
    data = tmp_path / "data"
    (data / "tokens").mkdir(parents=True)
    data.chmod(0o755)
    (data / "tokens").chmod(0o755)
    old = data / "tokens" / "admin.token"
    old.write_text("old\n")
    old.chmod(0o644)
    r = run(["init"], data)
    assert r.returncode == 0, r.stderr
    assert old.read_text().strip() != "old"
    said = " ".join(r.stderr.split())
    assert f"{old.resolve()}: replaced its token, which was readable by others (mode 0644)" in said
    assert "gets 401 now" in said and "server.token" not in said  # server.token was new
    for token_file in (old, data / "tokens" / "server.token"):
        assert token_file.stat().st_mode & 0o777 == 0o600
    assert (data / "tokens").stat().st_mode & 0o777 == 0o700
    assert data.stat().st_mode & 0o777 == 0o700
    # both files there with a wide mode: init keeps the tokens and narrows the modes
    for token_file in (old, data / "tokens" / "server.token"):
        token_file.chmod(0o644)
    kept = old.read_text()
    assert run(["init"], data).returncode == 0
    assert old.read_text() == kept and old.stat().st_mode & 0o777 == 0o600


def test_init_says_which_short_token_it_replaced(tmp_path: Path) -> None:
    """A private file whose token is shorter than a generated one (43 characters) gets a new
    token in a database without tokens, and init says so on stderr, naming the file: it
    printed only "generated admin.token and server.token"."""
    tokens = tmp_path / "tokens"
    tokens.mkdir(mode=0o700)
    short = tokens / "server.token"
    short.write_text("x" * 42 + "\n")
    short.chmod(0o600)
    r = run(["init"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(short.read_text().strip()) >= 43
    said = " ".join(r.stderr.split())
    assert f"{short.resolve()}: replaced its token, which was too short (42 characters" in said
    assert "admin.token" not in said


def test_token_list_and_revoke(tmp_path: Path) -> None:
    assert run(["init"], tmp_path).returncode == 0
    made = run(["token", "create", "--role", "server", "--label", "eu-1"], tmp_path)
    token = made.stdout.strip()
    listed = run(["token", "list"], tmp_path)
    assert listed.returncode == 0
    lines = [
        [w for w in line.split() if w != "│"]
        for line in listed.stdout.splitlines()
        if "eu-1" in line
    ]
    assert len(lines) == 1 and lines[0][1] == "server" and token not in listed.stdout
    assert lines[0][-1] == "—"  # not used yet
    token_id = lines[0][0]
    # once used, its last use is shown, to the minute
    store = Store(create_store_engine(f"sqlite:///{tmp_path / 'synelo.db'}"))
    assert store.use_token(hash_token(token)) is not None
    used = store.list_tokens()[-1].last_used_at
    assert used is not None
    shown = run(["token", "list"], tmp_path).stdout.splitlines()
    row = next(line for line in shown if "eu-1" in line)
    assert row.split()[-2] == used.isoformat(timespec="minutes")
    assert run(["token", "revoke", token_id], tmp_path).returncode == 0
    assert "eu-1" not in run(["token", "list"], tmp_path).stdout
    assert store.token_identity(token) is None
    again = run(["token", "revoke", token_id], tmp_path)
    assert again.returncode == 1 and "no stored token" in again.stderr


@pytest.mark.postgres
def test_init_on_a_new_postgresql_database_stores_the_token_files(
    pg_schema_url: str, tmp_path: Path
) -> None:
    """The order production.md had: `synelo init` on SQLite, then SYNELO_DATABASE_URL and
    `init` on a new PostgreSQL database. That database had no token, so it takes the token
    files' (it printed "tokens are in …", stored nothing, and both tokens got 401), and they
    work on a real service. Once it has tokens of its own, a file it does not know (its
    token revoked) is reported and never stored again."""
    data = tmp_path / "data"
    assert run(["init"], data).returncode == 0
    admin, server = ((data / "tokens" / f"{r}.token").read_text().strip() for r in ROLES)
    with own_pg_schema() as url:
        moved = run(["init"], data, SYNELO_DATABASE_URL=url)
        assert moved.returncode == 0, moved.stderr
        said = " ".join(moved.stdout.split())
        assert "created pool default" in said
        assert "stored the tokens of admin.token and server.token in postgresql" in said
        assert [(data / "tokens" / f"{r}.token").read_text().strip() for r in ROLES] == [
            admin,
            server,
        ]
        store = Store(create_store_engine(url))
        try:
            with serving(create_app(Settings(data_dir=data, database_url=url), store=store)) as at:
                _tokens_work(at, admin, server)
            revoked = next(t.id for t in store.list_tokens() if t.role == "admin")
            assert run(["token", "revoke", str(revoked)], data, SYNELO_DATABASE_URL=url)
            again = run(["init"], data, SYNELO_DATABASE_URL=url)
            assert again.returncode == 0, again.stderr
            warned = " ".join(again.stderr.split())
            assert f"{data.resolve() / 'tokens' / 'admin.token'}: postgresql" in warned
            assert "does not know this token" in warned and "not stored" in warned
            assert store.token_identity(admin) is None  # a revoked token stays revoked
            assert [t.role for t in store.list_tokens()] == ["server"]
        finally:
            store.engine.dispose()


ROLES = ("admin", "server")


def _tokens_work(url: str, admin: str, server: str) -> None:
    """The admin token reads a pool, the server token reports a round to it."""
    pool = httpx.get(f"{url}/v1/pools/default", headers={"Authorization": f"Bearer {admin}"})
    assert pool.status_code == 200, pool.text
    body = {
        "round_id": "r1",
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(1)], "B": [steam(2)]},
    }
    rated = httpx.post(
        f"{url}/v1/pools/default/rounds", json=body, headers={"Authorization": f"Bearer {server}"}
    )
    assert rated.status_code == 201, rated.text


def _fill(store: Store, rounds: range) -> None:
    for n in rounds:
        store.submit_round("p", _report(n))


def test_sqlite_backup_while_rounds_arrive_and_restore(tmp_path: Path) -> None:
    data = tmp_path / "live"
    url = f"sqlite:///{data / 'synelo.db'}"
    engine = create_store_engine(url)
    migrate(engine)
    store = Store(engine)
    store.create_pool("p", 3, SynEloParams(theta=300))
    _fill(store, range(200))
    writing = threading.Thread(target=_fill, args=(store, range(200, 400)))
    writing.start()
    dest = tmp_path / "b.db"
    made = run(["backup", str(dest)], data)
    writing.join()
    assert made.returncode == 0, made.stderr
    assert dest.stat().st_mode & 0o777 == 0o600
    # a consistent snapshot: every round it holds has its three journal rows a side
    check = sqlite3.connect(dest)
    assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    n_rounds = check.execute("SELECT count(*) FROM rounds").fetchone()[0]
    assert 200 <= n_rounds <= 400
    assert check.execute("SELECT count(*) FROM journal").fetchone()[0] == 6 * n_rounds
    check.close()
    assert run(["backup", str(dest)], data).returncode == 1  # never overwrites

    fresh = tmp_path / "restored"
    restored = run(["restore", str(dest)], fresh)
    assert restored.returncode == 0, restored.stderr
    assert _counts(f"sqlite:///{fresh / 'synelo.db'}")["rounds"] == n_rounds
    again = Store(create_store_engine(f"sqlite:///{fresh / 'synelo.db'}"))
    assert again.submit_round("p", _report(n_rounds)).created  # it rates on from there
    # restoring over a database with data needs --replace, with the service stopped
    engine.dispose()
    refused = run(["restore", str(dest)], data)
    assert refused.returncode == 1 and "pass --replace to overwrite it" in refused.stderr
    assert run(["restore", str(dest), "--replace"], data).returncode == 0
    assert _counts(url)["rounds"] == n_rounds
    not_ours = tmp_path / "x.db"
    sqlite3.connect(not_ours).execute("CREATE TABLE t (x)")
    refused = run(["restore", str(not_ours), "--replace"], data)
    assert refused.returncode == 1 and "not a synelo back-up" in refused.stderr


@pytest.mark.postgres
def test_postgresql_backup_and_restore(pg_schema_url: str, tmp_path: Path) -> None:
    with own_pg_schema() as url:
        engine = create_store_engine(url)
        migrate(engine)
        store = Store(engine)
        store.create_pool("p", 3, SynEloParams(theta=300))
        _fill(store, range(120))
        before = _counts(url)
        engine.dispose()
        dest = tmp_path / "pg.dump"
        made = run(["backup", str(dest)], tmp_path, SYNELO_DATABASE_URL=url)
        assert made.returncode == 0, made.stderr
        schema = url.rsplit("%3D", 1)[1]
        with create_engine(url).connect() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            conn.commit()
        restored = run(["restore", str(dest)], tmp_path, SYNELO_DATABASE_URL=url)
        assert restored.returncode == 0, restored.stderr
        assert _counts(url) == before
        again = Store(create_store_engine(url))
        assert again.submit_round("p", _report(500)).created
        again.engine.dispose()
        assert _counts(url) != before
        # a database with data is kept unless --replace says otherwise, in SQLite's words
        # (not pg_restore's `relation "alembic_version" already exists`)
        changed = _counts(url)
        refused = run(["restore", str(dest)], tmp_path, SYNELO_DATABASE_URL=url)
        assert refused.returncode == 1, refused.stderr
        assert "has synelo's tables already: pass --replace to overwrite it" in refused.stderr
        assert "pg_restore" not in refused.stderr and _counts(url) == changed
        replaced = run(["restore", "--replace", str(dest)], tmp_path, SYNELO_DATABASE_URL=url)
        assert replaced.returncode == 0, replaced.stderr
        assert _counts(url) == before
