"""F1t where a user reads a SynElo pool's P: every answer of a pool with T ≠ 1 shows the
same σ(x/T) for the same teams (predict, rounds, all-play splits, a player's journal), its
export replays to the P's it stored, and a bad T from the settings form changes nothing.
On SQLite and PostgreSQL."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.journal import import_journal
from synelo.evaluation.replay import predict_all
from synelo.store.advice import setup_of, stale
from tests.conftest import LiveServer
from tests.integration.test_api_models import PLAYERS, new_pool, random_rounds
from tests.integration.test_pages_settings import browser, save, state  # noqa: F401
from tests.integration.test_rerate import wait
from tests.integration.test_temperature import _rounds

T = 2.5
Body = dict[str, Any]


def _uneven(count: int) -> list[Body]:
    """3v2 and 2v3 rounds among the ten players (F1u's ln(n_A/n_B) term in play)."""
    out = []
    for i in range(count):
        picked = [PLAYERS[(i * 3 + j * 7) % 10] for j in range(5)]
        if len(set(picked)) < 5:
            picked = PLAYERS[i % 5 : i % 5 + 5]
        a, b = (picked[:3], picked[3:]) if i % 2 else (picked[:2], picked[2:])
        out.append(
            {
                "round_id": f"u{i}",
                "server_id": "s1",
                "winner": "A" if i % 3 else "B",
                "teams": {"A": a, "B": b},
            }
        )
    return out


def _played(admin: httpx.Client, server: httpx.Client, bodies: list[Body]) -> tuple[str, list]:
    pool = new_pool(admin, "synelo", temperature=T)
    shown = []
    for body in bodies:
        r = server.post(f"/v1/pools/{pool}/rounds", json=body)
        assert r.status_code == 201, r.text
        shown.append(r.json()["p_a"])
    return pool, shown


def test_an_all_play_split_shows_the_p_predict_shows(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """A headcount pool's all-play split (k + 1 against k) shows the tempered P of its
    teams, as `predict` does for them (docs/maths/rating.md F1t: "the P a split answer
    shows" is the pool's)."""
    pool, _ = _played(admin, server, _rounds(60))
    players = PLAYERS[:7]
    r = server.post(f"/v1/pools/{pool}/splits", json={"players": players, "mode": "all-play"})
    assert r.status_code == 200, r.text
    (split,) = r.json()["splits"]
    predicted = server.post(
        f"/v1/pools/{pool}/predict", json={"teams": {"A": split["A"], "B": split["B"]}}
    )
    assert predicted.status_code == 200, predicted.text
    assert split["p_a"] == pytest.approx(predicted.json()["p_a"], abs=1e-9)


def test_a_players_public_journal_shows_the_p_of_the_round(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """The public history of a player (`PublicEntryOut.p`, "the player's team's predicted
    chance") shows, for each round, the chance the round's own page shows: team A's P_A,
    team B's 1 − P_A. (The admin history keeps F2's P, by which K·(S − P) recomputes each
    step.)"""
    bodies = _rounds(40)
    pool, shown = _played(admin, server, bodies)
    by_round = {b["round_id"]: p for b, p in zip(bodies, shown, strict=True)}
    steps = admin.get(f"/v1/pools/{pool}/players/{PLAYERS[0]}/history").json()["entries"]
    for e in steps:
        if e["kind"] == "round":
            assert abs(e["after"] - e["before"] - e["k"] * (e["s"] - e["p"])) <= 0.5 + 1e-9
    url = f"/v1/public/pools/{pool}/players/{PLAYERS[0]}/history"
    entries = admin.get(url).json()["entries"]  # exact: an admin's token
    moved = [
        e for e in entries if e["kind"] == "round" and abs(by_round[e["round_id"]] - 0.5) > 0.01
    ]
    assert moved
    for e in moved:
        p_a = by_round[e["round_id"]]
        assert e["p"] == pytest.approx(p_a if e["team"] == "A" else 1 - p_a, abs=1e-9)


def test_the_export_replays_to_the_stored_ps(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, tmp_path: Path
) -> None:
    """`synelo replay` of a T ≠ 1 pool's export (its header carries T) predicts each round
    with the P the pool stored, even rosters and uneven ones."""
    bodies = [*_rounds(30), *_uneven(30)]
    pool, shown = _played(admin, server, bodies)
    exported = import_journal(live.store, pool)
    assert exported.header["params"]["temperature"] == T
    replayed = create_replay("synelo", {}, HistoryInfo(3, exported.header))
    predictions, _ = predict_all(replayed, exported.matches)
    for got, want in zip(predictions, shown, strict=True):
        assert math.isclose(got, want, rel_tol=1e-12)


@pytest.mark.usefixtures("threaded_jobs")
@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("0", "params.temperature: Input should be greater than or equal to 0.05"),
        ("1e9", "params.temperature: Input should be less than or equal to 20"),
        ("nan", "params.temperature"),
        ("warm", "params.temperature: Input should be a valid number"),
    ],
)
def test_a_bad_temperature_from_the_form_names_it_and_changes_nothing(
    browser: httpx.Client,  # noqa: F811
    admin: httpx.Client,
    server: httpx.Client,
    value: str,
    named: str,
) -> None:
    pool, _ = _played(admin, server, _rounds(5))
    before = state(admin, pool)
    r = save(browser, pool, {"params.temperature": value, "reason": "r"})
    assert r.status_code == 422, r.text
    error = r.text.split('id="settings-error">', 1)[1].split("</p>", 1)[0]
    assert named in error
    assert state(admin, pool) == before


@pytest.mark.parametrize("value", [0, -1, 1e9, "2", True])
def test_a_bad_temperature_from_the_api_names_it_and_changes_nothing(
    admin: httpx.Client, server: httpx.Client, value: object
) -> None:
    pool, _ = _played(admin, server, _rounds(5))
    before = admin.get(f"/v1/pools/{pool}").json()
    r = admin.patch(f"/v1/pools/{pool}", json={"params": {"temperature": value}})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][-1] == "temperature", r.text
    assert admin.get(f"/v1/pools/{pool}").json() == before
    body = {"name": f"bad{pool}", "team_size": 2, "params": {"temperature": value}}
    made = admin.post("/v1/pools", json=body)
    assert made.status_code == 422 and "temperature" in made.text, made.text
    assert admin.get(f"/v1/pools/bad{pool}").status_code == 404


def _stored(admin: httpx.Client, pool: str, bodies: list[Body]) -> list[float]:
    """Each round's stored P_A, exact (an admin's token)."""
    out = []
    for body in bodies:
        r = admin.get(f"/v1/public/pools/{pool}/rounds/{body['round_id']}")
        assert r.status_code == 200, r.text
        out.append(r.json()["p_a"])
    return out


@pytest.mark.usefixtures("threaded_jobs")
def test_a_re_rate_stores_the_ps_the_live_path_stores(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """A pool set to T by a PATCH, then voided and unvoided, stores the P's (and F6's
    Brier) a pool made with that T stored live, rounds of uneven rosters and changed
    participants included."""
    bodies = [*_rounds(25), *_uneven(25), *random_rounds(20, seed=3)]
    live_pool, shown = _played(admin, server, bodies)
    plain = new_pool(admin, "synelo")
    for body in bodies:
        assert server.post(f"/v1/pools/{plain}/rounds", json=body).status_code == 201
    assert _stored(admin, live_pool, bodies) == pytest.approx(shown, rel=1e-12)
    wait(admin, plain, admin.patch(f"/v1/pools/{plain}", json={"params": {"temperature": T}}))
    assert _stored(admin, plain, bodies) == pytest.approx(shown, rel=1e-12)
    gone = bodies[7]["round_id"]
    for action in ("void", "unvoid"):
        url = f"/v1/pools/{plain}/rounds/{gone}/{action}"
        wait(admin, plain, admin.post(url, json={"reason": "test"}))
    assert _stored(admin, plain, bodies) == pytest.approx(shown, rel=1e-12)
    q = [admin.get(f"/v1/pools/{p}/quality").json() for p in (plain, live_pool)]
    assert q[0]["brier_all"] == pytest.approx(q[1]["brier_all"], rel=1e-12)
    # the suggestion is a scale for Θ·T: the answer says T beside Θ
    assert q[0]["temperature"] == q[1]["temperature"] == T


def test_a_players_page_shows_the_chance_of_the_round(
    browser: httpx.Client,  # noqa: F811
    admin: httpx.Client,
    server: httpx.Client,
) -> None:
    """The player page's "win chance" of each recent round is the round's own, tempered."""
    bodies = _rounds(40)
    pool, shown = _played(admin, server, bodies)
    by_round = {b["round_id"]: p for b, p in zip(bodies, shown, strict=True)}
    page = browser.get(f"/pools/{pool}/players/{PLAYERS[0]}")
    assert page.status_code == 200, page.text
    rows = re.findall(
        r'<tr data-round="([^"]+)">.*?<td class="team">([^<]*)</td>\s*<td class="num">(\d+) %',
        page.text,
        re.S,
    )
    assert len(rows) > 5
    for round_id, team, percent in rows:
        p_a = by_round[round_id]
        assert int(percent) == round(100 * (p_a if team == "A" else 1 - p_a)), round_id


def test_advice_made_before_t_existed_is_not_stale_for_it(
    live: LiveServer, admin: httpx.Client
) -> None:
    """An advice stored before F1t names the pool's parameters without `temperature`; the
    pool, unchanged since, now stores T = 1 beside them. That is the same setup: the advice
    must not read "the pool's model or parameters changed"."""
    pool = live.store.get_pool(new_pool(admin, "synelo"))
    made = setup_of(pool)
    before_t = {k: v for k, v in made["params"].items() if k != "temperature"}
    assert stale(pool, {"pool": {**made, "params": before_t}}) is None
