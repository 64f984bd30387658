"""The wide scenario matrix of issue 35 (`make plugin-matrix`, not `make test`): 2, 6, 24, 32,
64 and 100 players with 32-byte names in every mode, on the real synelo.smx against a real
service (SQLite; on PostgreSQL, 24 and 100 players in every mode). The scenarios of
`make test` whose outcome is the service's (the outage, the 401 during set-up, a reload and a
map change, 100 players) run on PostgreSQL here too. Each run: reports stored with everyone
on the teams, nobody on Spectator outside arena (arena: the queue is the bench), lookups
answered, no plugin error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from plugin.emulate.game import MODES
from plugin.emulate.scenario import Options, run

from plugin import build
from tests.conftest import SERVER, LiveServer

pytestmark = pytest.mark.plugin_matrix
COUNTS = (2, 6, 24, 32, 64, 100)
# Every count on SQLite; on PostgreSQL, where only the service differs, a mid-size and the
# largest server in every mode.
GRID = [("sqlite", n) for n in COUNTS] + [("postgresql", n) for n in (24, 100)]


@pytest.fixture(scope="module")
def smx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("smx") / "synelo.smx"
    result = build.compile_sp(build.DEFAULT_SOURCE, out)
    assert result.ok, result.output
    return out


@pytest.mark.parametrize(("backend", "players"), GRID, indirect=["backend"])
@pytest.mark.parametrize("mode", MODES)
def test_count_in_mode(live: LiveServer, pool: str, smx: Path, mode: str, players: int) -> None:
    record = run(
        Options(
            url=live.url,
            token=SERVER,
            pool=pool,
            smx=smx,
            mode=mode,
            players=players,
            rounds=2,
            long_names=True,
            max_clients=101 if players > 64 else 0,
            round_seconds=60,
            late_joiners=1 if players < 100 else 0,
        )
    )
    assert [e for e in record["log"] if e["kind"] == "error"] == []
    lookups = [x for x in record["requests"] if x["path"].endswith("players/lookup")]
    if mode == "mvm":
        assert all(not r["stored"] for r in record["rounds"]) and record["moves"] == []
        return
    assert len(lookups) >= players and all(x["status"] == 200 for x in lookups)
    assert all(r["stored"] for r in record["rounds"]), record["rounds"]
    _, stored, _ = live.store.journal_rounds(pool)
    assert len(stored) == 2
    for r in record["rounds"]:
        seated = len(r["teams"]["red"]) + len(r["teams"]["blue"])
        if mode == "arena":
            assert len(r["teams"]["red"]) == len(r["teams"]["blue"]), r
        else:
            assert r["teams"]["spectator"] == [], r
            assert abs(len(r["teams"]["red"]) - len(r["teams"]["blue"])) <= 1, r
            assert seated >= players, r
