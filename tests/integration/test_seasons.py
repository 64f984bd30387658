"""Seasons over real HTTP on SQLite and PostgreSQL: `POST /v1/pools/{pool}/season` pulls every
rating toward the pool's mean, journals and logs it, refuses bad input without changing
anything; a re-rate (void, unvoid) keeps it at its place and its export replays it to every
stored rating, for every model; the settings page's form, `synelo pool season`, `synelo pool
import` of a history's season lines and `synelo import frc --no-seasons` do their part."""

from __future__ import annotations

import html
import math
import os
import random
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.history import read_history, write_history
from synelo.evaluation.journal import import_journal
from synelo.evaluation.replay import replay
from synelo.models import pool_models
from tests.conftest import SERVER, LiveServer
from tests.integration.test_api_models import PLAYERS, new_pool, random_rounds
from tests.integration.test_pages_admin import log_in
from tests.integration.test_rerate import everyone, histories, play, replays_to, wait

FRC = Path(__file__).parents[1] / "data" / "frc"


def season(admin: httpx.Client, pool: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    r = admin.post(f"/v1/pools/{pool}/season", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def changes(admin: httpx.Client, pool: str) -> list[dict[str, Any]]:
    return admin.get(f"/v1/pools/{pool}/changes").json()["changes"]


@pytest.fixture(scope="module")
def elo_pool(live: LiveServer) -> str:
    """An Elo pool of 12 rounds among the 10 players, shared by the module's API tests (each
    of which starts from its own copy of the ratings: see `fresh`)."""
    with live.client() as admin, live.client(SERVER) as server:
        pool = new_pool(admin, "elo")
        play(server, pool, random_rounds(12, seed=3))
    return pool


def test_a_season_pulls_every_rating_and_is_journaled_and_logged(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """Fraction ½: each player's exact Elo rating half-way to the mean of those who played;
    one never rated stays new. No fraction: the model's default, 0.3, said so in the answer
    and in the log."""
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(12, seed=3))
    before = everyone(server, pool, players=[*PLAYERS, "76561198000000999"])
    rated = {k: p["skill"]["rating"] for k, p in before.items() if p["rounds_played"] > 0}
    mean = math.fsum(rated.values()) / len(rated)
    answer = season(admin, pool, {"fraction": 0.5, "reason": "summer league"})
    assert answer == {
        "pool": pool,
        "fraction": 0.5,
        "default": False,
        "players": len(rated),
        "seq": 12,
    }
    after = everyone(server, pool, players=[*PLAYERS, "76561198000000999"])
    for key, rating in rated.items():
        assert after[key]["skill"]["rating"] == pytest.approx(rating + 0.5 * (mean - rating))
        assert after[key]["rating"] == round(after[key]["skill"]["rating"])
        assert after[key]["rounds_played"] == before[key]["rounds_played"]
    assert after["76561198000000999"] == before["76561198000000999"]
    entry = admin.get(f"/v1/pools/{pool}/players/{PLAYERS[0]}/history").json()["entries"][0]
    assert (entry["kind"], entry["round_id"], entry["before"], entry["after"]) == (
        "season",
        None,
        before[PLAYERS[0]]["rating"],
        after[PLAYERS[0]]["rating"],
    )
    logged = changes(admin, pool)[-1]
    assert (logged["kind"], logged["seq"], logged["value"]) == ("season", 12, {"fraction": 0.5})
    assert (logged["reason"], logged["actor"]) == ("summer league", "config:admin#1")

    default = season(admin, pool)  # no body at all
    assert (default["fraction"], default["default"]) == (0.3, True)
    assert changes(admin, pool)[-1]["value"] == {"default": 0.3}
    again = everyone(server, pool)
    spread = [after[key]["skill"]["rating"] for key in rated]
    spread_again = [again[key]["skill"]["rating"] for key in rated]
    assert max(spread_again) - min(spread_again) == pytest.approx(0.7 * (max(spread) - min(spread)))


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"fraction": 2}, ["body", "fraction"]),
        ({"fraction": -0.5}, ["body", "fraction"]),
        ({"fraction": "x"}, ["body", "fraction"]),
        ({"fraction": "0.5"}, ["body", "fraction"]),
        ({"fractions": 0.5}, ["body", "fractions"]),
        ({"reason": 5}, ["body", "reason"]),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_changes_nothing(
    admin: httpx.Client, server: httpx.Client, elo_pool: str, body: dict[str, Any], loc: list[str]
) -> None:
    before = everyone(server, elo_pool), changes(admin, elo_pool)
    r = admin.post(f"/v1/pools/{elo_pool}/season", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == loc
    assert (everyone(server, elo_pool), changes(admin, elo_pool)) == before


def test_only_an_admin_may_and_only_on_a_pool(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, elo_pool: str
) -> None:
    before = everyone(server, elo_pool), changes(admin, elo_pool)
    with live.client(None) as anyone:
        assert anyone.post(f"/v1/pools/{elo_pool}/season", json={}).status_code == 401
    assert server.post(f"/v1/pools/{elo_pool}/season", json={}).status_code == 403
    r = admin.post("/v1/pools/nosuchpool/season", json={"fraction": 0.5})
    assert r.status_code == 404, r.text
    assert (everyone(server, elo_pool), changes(admin, elo_pool)) == before


# --- re-rates and the export ------------------------------------------------------------------


def seasoned(
    server: httpx.Client, admin: httpx.Client, pool: str, bodies: list[dict[str, Any]], at: int
) -> None:
    """The rounds, with a season of ½ after the `at`-th and one of the default at the end."""
    play(server, pool, bodies[:at])
    season(admin, pool, {"fraction": 0.5, "reason": "summer"})
    play(server, pool, bodies[at:])
    season(admin, pool)


def with_scores(bodies: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The rounds in two modes with scores that agree with their winners (CTF captures of
    0–5, KOTH seconds of 0–180), so that the margin model learns from its scores (M1–M10)."""
    rng = random.Random(seed)
    out = []
    for i, body in enumerate(bodies):
        mode, top = ("ctf", 5) if i % 2 else ("koth", 180)
        low = rng.randint(0, top - 1)
        high = rng.randint(low + 1, top)
        scores = (
            {"A": low, "B": low}
            if body["winner"] == "draw"
            else ({"A": high, "B": low} if body["winner"] == "A" else {"A": low, "B": high})
        )
        out.append({**body, "mode": mode, "scores": scores})
    return out


@pytest.mark.usefixtures("threaded_jobs")
@pytest.mark.parametrize("model", [*pool_models(), "margin with scores"])
def test_a_season_is_kept_by_a_rerate_and_replayed_from_the_export(
    admin: httpx.Client, server: httpx.Client, live: LiveServer, tmp_path: Path, model: str
) -> None:
    """Rounds voided before and after a season re-rate the pool as a fresh pool fed the
    other rounds and the seasons at their places; the export (its season lines, the last
    one bare) replays to every stored rating; unvoiding both gives every rating and journal
    entry back. "margin with scores": 40 rounds with scores in two modes, so that the
    margin model's scored steps, spreads and season (M6, M7) are what is re-rated."""
    bodies = random_rounds(30, seed=17)
    if model == "margin with scores":
        model, bodies = "margin", with_scores(random_rounds(40, seed=17), seed=3)
    pool = new_pool(admin, model)
    seasoned(server, admin, pool, bodies, 15)
    before, journals = everyone(server, pool), histories(admin, pool)
    early, late = bodies[5]["round_id"], bodies[22]["round_id"]
    for round_id in (early, late):
        wait(
            admin,
            pool,
            admin.post(f"/v1/pools/{pool}/rounds/{round_id}/void", json={"reason": "x"}),
        )
    fresh = new_pool(admin, model)
    seasoned(server, admin, fresh, [b for b in bodies if b["round_id"] not in (early, late)], 14)
    voided = everyone(server, pool, stamps=False)
    assert voided == everyone(server, fresh, stamps=False)
    assert voided != {k: {**v, "last_played": None} for k, v in before.items()}

    exported = import_journal(live.store, pool)
    path = tmp_path / f"{uuid.uuid4().hex}.jsonl"
    write_history(path, exported.matches, exported.header, exported.trailing)
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    seasons = [line for line in lines if line.get("event") == "season"]
    assert [(s.get("fraction"), s.get("reason"), s["by"]) for s in seasons] == [
        (0.5, "summer", "config:admin#1"),
        (None, None, "config:admin#1"),
    ]
    history = read_history(path, strict=True)
    assert [e.kind for e in history.matches[15].events] == ["season"]
    assert [e.kind for e in history.trailing] == ["season", "void", "void"]
    replayed = create_replay(model, {}, HistoryInfo(4, history.header))
    replay(replayed, history.matches, trailing=history.trailing)
    stored = everyone(server, pool)
    assert set(replayed.ratings()) == set(stored)  # every player, each met by the replay
    replays_to(replayed, stored, exported.header)

    for round_id in (early, late):
        wait(admin, pool, admin.post(f"/v1/pools/{pool}/rounds/{round_id}/unvoid", json={}))
    assert everyone(server, pool) == before
    assert histories(admin, pool) == journals


@pytest.mark.usefixtures("threaded_jobs")
def test_a_whr_refit_keeps_the_season(admin: httpx.Client, server: httpx.Client) -> None:
    """A season of fraction 1 puts every WHR rating at the mean with a newcomer's
    uncertainty; the refit job (W10, stretch by stretch) keeps it so, where a refit that
    forgot it would spread them out again."""
    pool = new_pool(admin, "whr")
    play(server, pool, random_rounds(20, seed=9))
    season(admin, pool, {"fraction": 1})
    seasoned = everyone(server, pool)
    wait(admin, pool, admin.post(f"/v1/pools/{pool}/refit", json={}))
    refitted = everyone(server, pool)
    for players in (seasoned, refitted):
        rated = [p for p in players.values() if p["rounds_played"]]
        assert len({p["rating"] for p in rated}) == 1
        assert {round(p["skill"]["uncertainty"], 6) for p in rated} == {
            round(math.sqrt(2) * 400 / math.log(10), 6)
        }
    assert refitted != seasoned  # the fit's mean is the MAP's, not the online ratings'


# --- the settings page ---------------------------------------------------------------------------


@pytest.fixture
def browser(live: LiveServer) -> Iterator[httpx.Client]:
    with closing(log_in(live.url)) as logged_in:  # an admin's browser: its session cookie
        yield logged_in


def form_token(page: str) -> str:
    form = page.split('id="season-form"', 1)[1]
    return html.unescape(form.split('name="csrf" value="', 1)[1].split('"', 1)[0])


def test_the_settings_page_starts_a_season(
    browser: httpx.Client, admin: httpx.Client, server: httpx.Client
) -> None:
    """The form shows the model's default; a bad fraction is the form again with the field
    named and nothing changed; a good one pulls the ratings and says so; without the form
    token nothing happens."""
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(6, seed=4))
    page = browser.get(f"/pools/{pool}/settings").text
    assert 'placeholder="0.3"' in page and "Start a new season" in page
    csrf, before = form_token(page), everyone(server, pool)
    r = browser.post(f"/pools/{pool}/season", data={"csrf": csrf, "fraction": "2"})
    assert r.status_code == 422
    error = html.unescape(r.text.split('id="settings-error">', 1)[1].split("</p>", 1)[0])
    assert error.startswith("Nothing was changed: fraction: ") and "1" in error
    assert 'name="fraction" inputmode="decimal" size="6" placeholder="0.3" value="2"' in r.text
    r = browser.post(f"/pools/{pool}/season", data={"csrf": "forged", "fraction": "0.5"})
    assert r.status_code == 403
    assert everyone(server, pool) == before and changes(admin, pool) == []
    sent = {"csrf": csrf, "fraction": "0.5", "season_reason": "new map pool"}
    r = browser.post(f"/pools/{pool}/season", data=sent, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].endswith("/settings?done=season#season")
    notice = browser.get(r.headers["location"]).text
    assert "A new season has begun: every rating was pulled back toward the pool" in notice
    logged = changes(admin, pool)[-1]
    assert (logged["kind"], logged["value"], logged["reason"]) == (
        "season",
        {"fraction": 0.5},
        "new map pool",
    )
    assert everyone(server, pool) != before


# --- the command line ----------------------------------------------------------------------------


def command(live: LiveServer, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`synelo` on the database of `live`, beside the running service."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    env.update(
        COLUMNS="200",
        SYNELO_DATA_DIR=str(folder),
        SYNELO_DATABASE_URL=live.store.engine.url.render_as_string(hide_password=False),
    )
    return subprocess.run(
        [sys.executable, "-m", "synelo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command_line_starts_a_season_and_refuses_bad_input(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    pool = new_pool(admin, "elo")
    play(server, pool, random_rounds(6, seed=6))
    before = everyone(server, pool)
    for args, message, code in (
        (["--fraction", "2"], "--fraction: Input should be less than or equal to 1", 2),
        (["--fraction", "x"], "Invalid value for '--fraction'", 2),
        (["--reason", "r" * 501], "--reason: Value should have at most 500 items", 2),
    ):
        refused = command(live, tmp_path, "pool", "season", pool, *args)
        assert refused.returncode == code, refused.stderr
        assert message in refused.stderr and "Traceback" not in refused.stderr
    unknown = command(live, tmp_path, "pool", "season", "nosuchpool")
    assert unknown.returncode == 1 and "unknown pool 'nosuchpool'" in unknown.stderr
    assert everyone(server, pool) == before and changes(admin, pool) == []

    done = command(live, tmp_path, "pool", "season", pool, "--fraction", "0.25", "--reason", "s2")
    assert done.returncode == 0, done.stderr
    assert f"pool {pool}: a new season after 6 rounds;" in done.stdout
    assert "pulled 0.25 of the way back toward the mean" in done.stdout
    logged = changes(admin, pool)[-1]
    assert (logged["kind"], logged["value"], logged["reason"]) == (
        "season",
        {"fraction": 0.25},
        "s2",
    )
    assert logged["actor"].startswith("cli:")
    default = command(live, tmp_path, "pool", "season", pool)
    assert (
        default.returncode == 0
        and "0.3 of the way back toward the mean (the model's default)" in (default.stdout)
    )


def test_pool_import_starts_the_historys_seasons_once(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    """A history's season lines are started at their places, as the API would start them
    (a line before the first round has nothing to pull and is left out); a second import
    starts none."""
    bodies = [
        {k: v for k, v in b.items() if k in ("round_id", "teams", "winner", "participants")}
        for b in random_rounds(12, seed=8)
    ]
    matches = [
        {**{k: v for k, v in b.items() if k != "round_id"}, "id": b["round_id"]} for b in bodies
    ]
    lines: list[Any] = [
        {"event": "season"},
        *matches[:5],
        {"event": "season", "fraction": 0.5, "by": "league", "reason": "split"},
        *matches[5:],
        {"event": "season"},
    ]
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    imported, by_api = new_pool(admin, "elo"), new_pool(admin, "elo")
    done = command(live, tmp_path, "pool", "import", imported, str(path))
    assert done.returncode == 0, done.stderr
    assert "1 season lines before the first round are left out" in done.stdout
    assert "2 seasons are started at their places" in done.stdout
    assert "and started 2 seasons" in done.stdout

    reports = [{**b, "server_id": "import", "map": ""} for b in bodies]
    play(server, by_api, reports[:5])
    season(admin, by_api, {"fraction": 0.5})
    play(server, by_api, reports[5:])
    season(admin, by_api)
    assert everyone(server, imported, stamps=False) == everyone(server, by_api, stamps=False)
    logged = [(c["seq"], c["value"], c["actor"]) for c in changes(admin, imported)]
    assert logged == [(5, {"fraction": 0.5}, "league"), (12, {"default": 0.3}, "import")]

    again = command(live, tmp_path, "pool", "import", imported, str(path))
    assert again.returncode == 0 and "nothing new" in again.stdout
    assert len(changes(admin, imported)) == 2


def test_import_frc_marks_each_year_a_season_unless_asked_not_to(tmp_path: Path) -> None:
    """A bare season line before 2016's first match (after 2004's last); none with
    --no-seasons, the matches the same."""
    years = [str(FRC / "2004.csv"), str(FRC / "2016.csv")]

    def frc(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
        made = subprocess.run(
            [sys.executable, "-m", "synelo", "import", "frc", *years, *args, "-o", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert made.returncode == 0, made.stderr
        return made

    assert "1 new season)" in frc(tmp_path / "s.jsonl").stdout
    history = read_history(tmp_path / "s.jsonl", strict=True)
    starts = [i for i, m in enumerate(history.matches) if m.events]
    assert len(starts) == 1 and history.matches[starts[0]].id.startswith("2016")
    assert history.matches[starts[0] - 1].id.startswith("2004")
    assert b'\n{"event":"season"}\n' in (tmp_path / "s.jsonl").read_bytes()
    assert "0 new seasons)" in frc(tmp_path / "p.jsonl", "--no-seasons").stdout
    plain = read_history(tmp_path / "p.jsonl", strict=True)
    assert not any(m.events for m in plain.matches)
    assert [m.id for m in plain.matches] == [m.id for m in history.matches]
