"""`synelo pool import` on SQLite and PostgreSQL, run as an operator runs it (on the
service's database, with its own engine): it rates a history as the API would, a second run
adds nothing, a bad line is named and changes nothing, and an import beside a real `synelo
serve` rating the same pool, in a process of its own, loses and doubles no update. The other
runs go through `test_cli.run_in`, in this process: what they check is the command's, not
its process's."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from tests.conftest import SERVER, LiveServer, steam
from tests.integration.test_cli import run_in
from tests.integration.test_concurrency import (
    assert_stored_as_replayed,
    journal_events,
    random_round,
    serve_workers,
)

START = datetime(2026, 10, 1, 18, tzinfo=UTC)


def pool_import(
    live: LiveServer, folder: Path, pool: str, history: Path, *args: str
) -> subprocess.Popen[str]:
    """`synelo pool import` on the database of `live`, started (not waited for)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(
        SYNELO_DATA_DIR=str(folder),
        SYNELO_DATABASE_URL=live.store.engine.url.render_as_string(hide_password=False),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "synelo", "pool", "import", pool, str(history), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_import(
    live: LiveServer, folder: Path, pool: str, history: Path, *args: str
) -> tuple[int, str, str]:
    """`synelo pool import` on the database of `live`, run to its end (`test_cli.run_in`)."""
    done = run_in(
        None,
        ["pool", "import", pool, str(history), *args],
        SYNELO_DATA_DIR=str(folder),
        SYNELO_DATABASE_URL=live.store.engine.url.render_as_string(hide_password=False),
    )
    return done.returncode, done.stdout, done.stderr


def export_journal(live: LiveServer, folder: Path, pool: str) -> Path:
    """`synelo import journal` of the pool into `folder`/export.jsonl, run to its end."""
    exported = folder / "export.jsonl"
    url = live.store.engine.url.render_as_string(hide_password=False)
    done = run_in(
        folder, ["import", "journal", "--pool", pool, "-o", str(exported)], SYNELO_DATABASE_URL=url
    )
    assert done.returncode == 0, done.stderr
    return exported


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def new_pool(admin: httpx.Client, team_size: int = 2) -> str:
    name = f"i{uuid.uuid4().hex[:12]}"
    body = {"name": name, "team_size": team_size, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    return name


def season(count: int) -> list[dict[str, Any]]:
    """`count` 2v2 matches among 8 players over 20 days, with the report's fields a history
    carries: names, a map, whole scores (read back as floats), a leaver now and then, an end
    time on some, a start time (`time`) on the others."""
    rng = random.Random(5)
    matches = []
    for i in range(count):
        players = [steam(n) for n in rng.sample(range(1, 9), 4)]
        at = START + timedelta(hours=12 * i)
        match: dict[str, Any] = {
            "id": f"season/{i}",
            "teams": {"A": players[:2], "B": players[2:]},
            "winner": rng.choice(["A", "B", "draw"]),
            "map": rng.choice(["cp_process", "pl_upward"]),
            "scores": {"A": rng.randrange(4), "B": rng.randrange(4)},
            "names": {p: f"Player {p[-2:]}" for p in players},
        }
        if i % 3 == 0:
            match["ended_at"] = (at + timedelta(minutes=20)).isoformat()
        else:
            match["time"] = at.isoformat()
        if i % 7 == 0:
            match["participants"] = {"A": players[:2], "B": players[2:3]}
        matches.append(match)
    return matches


def as_report(match: dict[str, Any]) -> dict[str, Any]:
    """The round report a game server would have sent for the match."""
    body = {k: v for k, v in match.items() if k not in ("id", "time")}
    body.update(round_id=match["id"], server_id="import")
    if "time" in match:
        body["started_at"] = match["time"]
    return body


def test_an_import_rates_as_the_api_and_a_second_adds_nothing(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    """The same 40 matches reported through the API into one pool and imported into
    another give the same ratings, names and round dates; the import dates its rounds by
    their own time, over 20 days; its second run rates nothing."""
    matches = season(40)
    history = write_lines(tmp_path / "season.jsonl", [{"synelo_history": 1}, *matches])
    by_api, imported = new_pool(admin), new_pool(admin)
    for match in matches:
        r = server.post(f"/v1/pools/{by_api}/rounds", json=as_report(match))
        assert r.status_code == 201, r.text

    code, out, err = run_import(live, tmp_path, imported, history)
    assert code == 0, err
    assert "rated 40 new rounds into pool" in out and "0 were there already" in out
    assert "40/40" in err  # the progress bar, at its end
    ids = [steam(n) for n in range(1, 9)]

    def players(pool: str) -> list[tuple[Any, ...]]:
        found = server.post(f"/v1/pools/{pool}/players/lookup", json={"steam_ids": ids})
        return [(p["rating"], p["rounds_played"], p["name"]) for p in found.json()["players"]]

    assert players(imported) == players(by_api)
    assert sum(n for _, n, _ in players(imported)) == 4 * 40 - 6  # every 7th: a leaver
    for match in matches[:4]:
        path = f"/v1/public/pools/{imported}/rounds/{quote(match['id'], safe='')}"
        answer = admin.get(path).json()
        assert datetime.fromisoformat(answer["at"]) == datetime.fromisoformat(
            match.get("ended_at") or match["time"]
        )
    played: dict[str, int] = {}
    for match in matches:
        day = (match.get("ended_at") or match["time"])[:10]
        played[day] = played.get(day, 0) + 1
    days = admin.get(f"/v1/public/pools/{imported}/health").json()["rounds_per_day"]
    assert {d["day"]: d["rounds"] for d in days} == played and len(played) == 21

    code, out, err = run_import(live, tmp_path, imported, history)
    assert code == 0, err
    assert f"nothing new: pool {imported} had all 40 rounds already" in out
    assert admin.get(f"/v1/pools/{imported}").json()["rounds"] == 40
    assert players(imported) == players(by_api)


def test_a_pools_journal_export_imports_into_another_pool(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    """`synelo import journal` then `synelo pool import`: the second pool gets the rounds
    with their ratings and dates, also a round whose report gave its end only (the
    export's time is then its ended_at, not its arrival, which comes after it)."""
    source, copy = new_pool(admin), new_pool(admin)
    ended = START + timedelta(days=3)
    for i, times in enumerate([{"ended_at": ended.isoformat()}, {}]):
        body = {**as_report(season(2)[i]), **times}
        assert server.post(f"/v1/pools/{source}/rounds", json=body).status_code == 201
    exported = export_journal(live, tmp_path, source)
    code, out, err = run_import(live, tmp_path, copy, exported)
    assert code == 0, err
    assert "rated 2 new rounds" in out
    first = admin.get(f"/v1/public/pools/{copy}/rounds/{quote(season(2)[0]['id'], safe='')}")
    assert datetime.fromisoformat(first.json()["at"]) == ended
    boards = [admin.get(f"/v1/pools/{p}/leaderboard").json()["players"] for p in (source, copy)]
    ratings = [[(p["steam_id"], p["rating"]) for p in board] for board in boards]
    assert ratings[0] and ratings[1] == ratings[0]


def test_bad_lines_are_named_and_nothing_is_rated(
    live: LiveServer, admin: httpx.Client, tmp_path: Path
) -> None:
    """Each bad line is named with its field, and no round of the file is rated; a round
    whose id the pool has with other content is refused alone. Never a traceback."""
    pool = new_pool(admin)
    good = season(3)
    history = write_lines(
        tmp_path / "bad.jsonl",
        [
            good[0],
            {**good[1], "teams": {"A": ["frc254"], "B": [steam(1)]}},
            {**good[1], "id": "naive", "time": "2026-10-01T18:00:00"},
            {**good[1], "id": "half", "scores": {"A": 1.5, "B": 2}},
            {**good[1], "id": "stranger", "names": {steam(9): "Nobody"}},
        ],
    )
    (tmp_path / "bad.jsonl").write_bytes(history.read_bytes() + b"not json\n")
    code, out, err = run_import(live, tmp_path, pool, history)
    assert code == 1 and "Traceback" not in err
    lines = err.replace(f"{history}: ", "").splitlines()
    assert lines == [
        "line 2: teams.A.0: a SteamID64 has exactly 17 digits",
        "line 3: time: Input should have timezone info",
        "line 4: scores.A: Input should be a valid integer",
        f"line 5: names.{steam(9)}: player {steam(9)} is not in this round",
        "line 6: invalid literal, expected 'null': line 1 column 1 (char 0)",
        "nothing imported: fix the 5 error(s) above",
    ]
    assert admin.get(f"/v1/pools/{pool}").json()["rounds"] == 0

    # the pool has round 1 with another winner: that round alone is refused
    clash = {**as_report(good[1]), "winner": "B" if good[1]["winner"] != "B" else "A"}
    assert admin.post(f"/v1/pools/{pool}/rounds", json=clash).status_code == 201
    history = write_lines(tmp_path / "good.jsonl", good)
    code, out, err = run_import(live, tmp_path, pool, history)
    assert code == 1 and "Traceback" not in err
    assert f"line 2: id: the pool has round '{good[1]['id']}' with other content" in err
    assert "rated 2 new rounds" in out
    assert admin.get(f"/v1/pools/{pool}").json()["rounds"] == 3

    code, _, err = run_import(live, tmp_path, "no-such-pool", history)
    assert code == 1 and "unknown pool 'no-such-pool'" in err and "Traceback" not in err


def test_an_import_beside_a_running_serve_loses_no_update(
    live: LiveServer, pool: str, tmp_path: Path
) -> None:
    """A real `synelo serve` rates rounds posted to a pool while `synelo pool import` rates
    300 more into it from another process. Every round is rated once, the two interleave,
    and the stored ratings equal the pure maths replaying the journal in its order."""
    rng = random.Random(23)
    history = [random_round(rng) for _ in range(300)]
    path = write_lines(
        tmp_path / "h.jsonl",
        [{"id": r["round_id"], "teams": r["teams"], "winner": r["winner"]} for r in history],
    )
    posted: list[dict[str, Any]] = []
    url = live.store.engine.url.render_as_string(hide_password=False)
    (tmp_path / "serve").mkdir()
    with serve_workers(url, tmp_path / "serve", workers=1) as served:
        importing = pool_import(live, tmp_path, pool, path)

        refused: list[str] = []

        def post_while_importing() -> None:
            with httpx.Client(
                base_url=served, timeout=60, headers={"Authorization": f"Bearer {SERVER}"}
            ) as c:
                while importing.poll() is None and len(posted) < 3000:
                    body = random_round(rng)
                    r = c.post(f"/v1/pools/{pool}/rounds", json=body)
                    if r.status_code != 201:
                        refused.append(r.text)
                        return
                    posted.append(body)

        poster = threading.Thread(target=post_while_importing)
        poster.start()
        out, err = importing.communicate(timeout=300)
        poster.join(60)
    assert importing.returncode == 0, err
    assert "rated 300 new rounds" in out and refused == []

    events = journal_events(live, pool)
    played = [e for e in events if e[0] == "round"]
    sent = {r["round_id"]: r for r in [*history, *posted]}
    assert sorted(e[1] for e in played) == sorted(sent)
    assert [e[2] for e in played] == list(range(1, len(sent) + 1))  # each rated once
    assert all(e[3] == 6 for e in played)
    seq = {e[1]: e[2] for e in played}
    imported = [seq[r["round_id"]] for r in history]
    assert imported == sorted(imported)  # in the file's order
    assert any(imported[0] < seq[r["round_id"]] < imported[-1] for r in posted)  # interleaved
    assert_stored_as_replayed(live, pool, events, sent)


def test_a_history_without_times_imports_into_a_whr_pool_on_the_virtual_clock(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    """Rounds imported without a time are received in one go, but are not one day: they are
    marked `undated` and W11's virtual clock dates them, as the model rates them offline and
    as a replay of the pool's export does (which gives them no time either). A live round
    after them is dated on the same axis, in the service and in the export's replay."""
    from synelo.models import RoundFacts
    from synelo.models.whr import Whr

    name = f"i{uuid.uuid4().hex[:12]}"
    body = {"name": name, "team_size": 1, "model": "whr", "public": True}
    assert admin.post("/v1/pools", json=body).status_code == 201
    rng = random.Random(11)
    players = [steam(n) for n in range(1, 5)]
    matches = []
    for i in range(16):
        a, b = rng.sample(players, 2)
        matches.append({"id": f"m{i}", "teams": {"A": [a], "B": [b]}, "winner": "A"})
    code, _, err = run_import(live, tmp_path, name, write_lines(tmp_path / "h.jsonl", matches))
    assert code == 0, err
    model, states, context = Whr(), {}, {}
    for match in matches:
        facts = RoundFacts((match["teams"]["A"][0],), (match["teams"]["B"][0],), "A")
        keys = model.context_keys(facts)
        rated = model.rate(states, facts, {k: context[k] for k in keys if k in context})
        states.update(rated.states)
        context.update(rated.context)
    shown = server.post(f"/v1/pools/{name}/players/lookup", json={"steam_ids": players})
    assert shown.status_code == 200, shown.text
    for player in shown.json()["players"]:
        assert player["skill"] == model.fields(states[player["steam_id"]])
    assert max(len(s.days) for s in states.values()) > 4  # 16 rounds of 4 players: 8 days
    exported = export_journal(live, tmp_path, name)
    rows = [orjson.loads(line) for line in exported.read_bytes().splitlines()[1:]]
    assert len(rows) == 16 and not any("time" in row for row in rows)
    # the pool goes live: a dated round lands on the clock's day (W11's one axis), not some
    # 20,000 days after the imported ones, in the service and in the replay of its export
    live_round = {"id": "live", "teams": {"A": [players[0]], "B": [players[1]]}, "winner": "B"}
    live_round["time"] = START.isoformat()
    assert server.post(f"/v1/pools/{name}/rounds", json=as_report(live_round)).status_code == 201
    facts = RoundFacts((players[0],), (players[1],), "B", extras={"started_at": START})
    keys = model.context_keys(facts)
    rated = model.rate(states, facts, {k: context[k] for k in keys if k in context})
    states.update(rated.states)
    for player in players[:2]:
        days = states[player].days
        assert days[-1] - days[-2] <= 1 and days[-1] < 100, days
    shown = server.post(f"/v1/pools/{name}/players/lookup", json={"steam_ids": players})
    for player in shown.json()["players"]:
        assert player["skill"] == model.fields(states[player["steam_id"]])
    from synelo.evaluation.adapters.whr import WhrReplay
    from synelo.evaluation.history import read_history

    replay = WhrReplay(Whr, {})
    for match in read_history(export_journal(live, tmp_path, name)).matches:
        replay.step(match)
    assert {p: replay.states[p].days for p in players} == {p: states[p].days for p in players}
