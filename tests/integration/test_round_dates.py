"""A round is dated by when it was played, not by when the service received it: its report's
ended_at, else its started_at, else its arrival. Over real HTTP on SQLite and PostgreSQL, in
every answer and page that dates a round (the browser check is tests/browser/test_pages.py)."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer, steam
from tests.integration.test_api_positional import finished

NOW = datetime.now(UTC).replace(microsecond=0)
ENDED = (NOW - timedelta(days=20)).replace(hour=20, minute=30, second=0)
STARTED = (NOW - timedelta(days=10)).replace(hour=8, minute=0, second=0)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _report(round_id: str, a: int, b: int, **times: datetime) -> dict[str, Any]:
    return {
        "round_id": round_id,
        "server_id": "s",
        "winner": "A",
        "teams": {"A": [steam(a)], "B": [steam(b)]},
        **{name: _iso(moment) for name, moment in times.items()},
    }


def test_rounds_are_dated_by_their_own_time_everywhere(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """Four rounds received within seconds: one ended 20 days ago, one started 10 days
    ago (no end given), one with no time, one whose server's clock is a year ahead. Each
    answer and page dates them so (the last by its arrival, never later), and the health
    figures count them on their days, 20 days apart, not on one."""
    pool = f"d{uuid.uuid4().hex[:12]}"
    body = {"name": pool, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    rounds = [
        _report("ended", 1, 2, started_at=ENDED - timedelta(minutes=30), ended_at=ENDED),
        _report("started", 1, 3, started_at=STARTED),
        _report("untimed", 1, 4),
        _report("ahead", 1, 5, ended_at=NOW + timedelta(days=400)),  # a clock a year ahead
    ]
    for report in rounds:
        assert server.post(f"/v1/pools/{pool}/rounds", json=report).status_code == 201

    public = httpx.Client(base_url=live.url, timeout=10)
    at = {
        r["round_id"]: datetime.fromisoformat(
            public.get(f"/v1/public/pools/{pool}/rounds/{r['round_id']}").json()["at"]
        )
        for r in rounds
    }
    received = at["untimed"]
    assert at["ended"] == ENDED and at["started"] == STARTED
    assert abs(received - datetime.now(UTC)) < timedelta(minutes=5)  # when it came
    assert received <= at["ahead"] <= datetime.now(UTC)  # never after it came

    # a player's history, public and admin, dates each round entry the same way
    entries = public.get(f"/v1/public/pools/{pool}/players/{steam(1)}/history").json()
    newest_first = [(rid, at[rid]) for rid in ("ahead", "untimed", "started", "ended")]
    assert [
        (e["round_id"], datetime.fromisoformat(e["at"])) for e in entries["entries"]
    ] == newest_first
    admin_entries = admin.get(f"/v1/pools/{pool}/players/{steam(1)}/history").json()["entries"]
    assert [datetime.fromisoformat(e["at"]) for e in admin_entries] == [a for _, a in newest_first]

    # the health figures: the rounds on their days, 20 days apart, the days between empty
    days = public.get(f"/v1/public/pools/{pool}/health").json()["rounds_per_day"]
    counted = {date.fromisoformat(d["day"]): d["rounds"] for d in days}
    first, last = ENDED.date(), at["ahead"].date()
    assert list(counted) == [first + timedelta(days=i) for i in range((last - first).days + 1)]
    assert {d: n for d, n in counted.items() if n} == dict(
        Counter(moment.date() for moment in at.values())
    )

    # the round page, and the recent rounds the scramble viewer offers
    page = public.get(f"/pools/{pool}/rounds/ended").text
    assert f"{ENDED:%Y-%m-%d %H:%M} UTC" in page
    player = public.get(f"/pools/{pool}/players/{steam(1)}").text  # their recent rounds
    listed = re.findall(r'<tr data-round="([^"]+)"><td><a [^>]+>([^<]+)</a>', player)
    assert listed == [(rid, f"{when:%Y-%m-%d %H:%M}") for rid, when in newest_first]
    recent = live.store.recent_rosters(live.store.get_pool(pool), 4)
    assert [(rid, when) for rid, when, *_ in recent] == newest_first


@pytest.mark.usefixtures("threaded_jobs")
@pytest.mark.parametrize("model", ["synelo", "elo"])
def test_last_played_is_when_the_round_was_played(
    admin: httpx.Client, server: httpx.Client, model: str
) -> None:
    """A player's last_played is their newest round's own time (its ended_at, else its
    arrival), not when the service received it: when the round is rated, and again after
    a re-rate (a PATCH that changes the model) rebuilds every player."""
    pool = f"d{uuid.uuid4().hex[:12]}"
    body = {"name": pool, "team_size": 1, "model": model, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    old = _report("old", 1, 2, started_at=ENDED - timedelta(minutes=30), ended_at=ENDED)
    assert server.post(f"/v1/pools/{pool}/rounds", json=old).status_code == 201
    assert server.post(f"/v1/pools/{pool}/rounds", json=_report("new", 3, 2)).status_code == 201

    def last_played() -> dict[int, datetime]:
        return {
            n: datetime.fromisoformat(
                admin.get(f"/v1/pools/{pool}/players/{steam(n)}").json()["last_played"]
            )
            for n in (1, 2, 3)
        }

    rated = last_played()
    assert rated[1] == ENDED  # played 20 days ago, received now
    assert abs(rated[2] - datetime.now(UTC)) < timedelta(minutes=5)  # then a round now
    assert rated[3] == rated[2]
    other = "elo" if model == "synelo" else "synelo"
    job = finished(admin, pool, admin.patch(f"/v1/pools/{pool}", json={"model": other}))
    assert job["status"] == "done", job
    assert last_played() == rated
