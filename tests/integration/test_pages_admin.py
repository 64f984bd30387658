"""The pages' admin login and admin actions over real HTTP: sessions from an admin token,
the form token (CSRF) on every form, private pools, the actions and who may see what."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from synelo.config import Settings
from synelo.service import charts
from synelo.service.app import create_app
from synelo.service.pages import glossary
from synelo.store.repository import Store
from tests.conftest import ADMIN, SERVER, LiveServer, MovableClock, post_round, serving, steam


def form_token(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "the page has no form token"
    return found.group(1)


def log_in(url: str, token: str = ADMIN) -> httpx.Client:
    """A browser-like client (cookies, no Authorization header) logged in with `token`."""
    browser = httpx.Client(base_url=url, timeout=30)
    login = browser.get("/login")
    r = browser.post(
        "/login",
        data={"token": token, "csrf": form_token(login.text), "next": "/"},
    )
    assert r.status_code == 303, r.text
    return browser


@pytest.fixture
def browser(live: LiveServer) -> Iterator[httpx.Client]:
    b = log_in(live.url)
    yield b
    b.close()


@pytest.fixture
def anonymous(live: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.url, timeout=30) as c:
        yield c


@pytest.fixture
def private(admin: httpx.Client, server: httpx.Client) -> str:
    """A private pool (a shadow period of 1 round) where players 1-4 played 12 rounds."""
    name = f"adm{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 2, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(12):
        post_round(server, name, [1, 2], [3, 4], "A" if i % 3 else "B")
    return name


def test_the_login_sets_a_strict_http_only_cookie_and_never_a_token(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as b:
        login = b.get("/login")
        assert login.status_code == 200
        r = b.post("/login", data={"token": ADMIN, "csrf": form_token(login.text), "next": "/"})
        assert r.status_code == 303 and r.headers["location"] == "/"
        cookie = r.headers["set-cookie"]
        assert "synelo_session=" in cookie
        assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
        assert ADMIN not in cookie
        home = b.get("/")
        assert "Log out" in home.text and ADMIN not in home.text
        assert home.headers["cache-control"] == "no-store"


def test_a_wrong_or_server_token_gets_no_session(live: LiveServer) -> None:
    for token in ("not-a-token", SERVER, ""):
        with httpx.Client(base_url=live.url, timeout=30) as b:
            login = b.get("/login")
            r = b.post("/login", data={"token": token, "csrf": form_token(login.text)})
            assert r.status_code == 401
            assert "That is not an admin token." in r.text
            assert "synelo_session" not in r.headers.get("set-cookie", "")
            assert token == "" or token not in r.text


def test_a_login_without_its_form_token_is_refused(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url, timeout=30) as b:
        b.get("/login")  # the form's cookie is set, but the post does not carry the field
        r = b.post("/login", data={"token": ADMIN})
        assert r.status_code == 403
        assert "synelo_session" not in r.headers.get("set-cookie", "")
    with httpx.Client(base_url=live.url, timeout=30) as b:  # a field but no form cookie
        r = b.post("/login", data={"token": ADMIN, "csrf": "forged"})
        assert r.status_code == 403


def test_the_login_goes_back_to_a_local_page_only(live: LiveServer) -> None:
    for given, expected in (
        ("/pools/x", "/pools/x"),
        ("https://evil.example/", "/"),
        ("//e", "/"),
        ("/\\evil.example", "/"),
        ("/\t/evil.example", "/"),
    ):
        with httpx.Client(base_url=live.url, timeout=30) as b:
            login = b.get("/login")
            data = {"token": ADMIN, "csrf": form_token(login.text), "next": given}
            assert b.post("/login", data=data).headers["location"] == expected


def test_private_pages_refuse_without_login_and_open_with_it(
    private: str, anonymous: httpx.Client, browser: httpx.Client
) -> None:
    for path in (
        f"/pools/{private}",
        f"/pools/{private}/players/{steam(1)}",
        f"/pools/{private}/scramble",
    ):
        refused = anonymous.get(path)
        assert refused.status_code in (401, 404), path
        assert "Player 1" not in refused.text
        shown = browser.get(path)
        assert shown.status_code == 200, (path, shown.text)
    assert private not in anonymous.get("/").text
    index = browser.get("/").text
    assert private in index and "private" in index


def test_a_form_post_without_the_form_token_changes_nothing(
    live: LiveServer, private: str, browser: httpx.Client, admin: httpx.Client
) -> None:
    player = f"/pools/{private}/players/{steam(1)}"
    before = admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()
    for data in ({"rating": "1500"}, {"rating": "1500", "csrf": "not-the-token"}):
        r = browser.post(f"{player}/rating", data=data)
        assert r.status_code == 403
        assert "not sent from one of this site" in r.text
    assert browser.post(f"{player}/hidden", data={"hidden": "true"}).status_code == 403
    assert browser.post(f"{player}/reset", data={}).status_code == 403
    assert browser.post("/logout", data={}).status_code == 403
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json() == before
    assert admin.get(f"/v1/pools/{private}/changes").json()["changes"] == []
    assert browser.get("/").text.count("Log out") == 1  # still logged in


def test_an_anonymous_form_post_is_refused(private: str, anonymous: httpx.Client) -> None:
    r = anonymous.post(
        f"/pools/{private}/players/{steam(1)}/rating", data={"rating": "1500", "csrf": "x"}
    )
    assert r.status_code == 401


def test_the_admin_actions_set_reset_hide_and_log_who(
    private: str, browser: httpx.Client, admin: httpx.Client, live: LiveServer
) -> None:
    player = f"/pools/{private}/players/{steam(1)}"
    token = form_token(browser.get(player).text)
    r = browser.post(f"{player}/rating", data={"rating": "1234", "reason": "test", "csrf": token})
    assert r.status_code == 303 and r.headers["location"] == f"{player}?done=set"
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()["rating"] == 1234
    assert "The rating was set." in browser.get(r.headers["location"]).text
    out = browser.post(f"{player}/rating", data={"rating": "99999999", "csrf": token})
    assert out.status_code == 422 and "rating must be within" in out.text
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()["rating"] == 1234

    assert (
        browser.post(f"{player}/hidden", data={"hidden": "true", "csrf": token}).status_code == 303
    )
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()["hidden"] is True
    assert "Show on public pages" in browser.get(player).text  # the admin still sees them
    assert (
        browser.post(f"{player}/hidden", data={"hidden": "false", "csrf": token}).status_code == 303
    )
    assert admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()["hidden"] is False

    assert browser.post(f"{player}/reset", data={"csrf": token}).status_code == 303
    reset = admin.get(f"/v1/pools/{private}/players/{steam(1)}").json()
    assert reset["rounds_played"] == 0
    kinds = [
        (c["kind"], c["actor"]) for c in admin.get(f"/v1/pools/{private}/changes").json()["changes"]
    ]
    assert kinds == [
        ("set", "config:admin#1"),
        ("hide", "config:admin#1"),
        ("hide", "config:admin#1"),
        ("reset", "config:admin#1"),
    ]


def test_an_admin_voids_and_unvoids_a_round_from_its_page(
    live: LiveServer,
    admin: httpx.Client,
    server: httpx.Client,
    browser: httpx.Client,
    threaded_jobs: None,
) -> None:
    name = f"vd{uuid.uuid4().hex[:10]}"
    assert (
        admin.post("/v1/pools", json={"name": name, "team_size": 1, "public": True}).status_code
        == 201
    )
    first = post_round(server, name, [1], [2], "A")
    post_round(server, name, [1], [2], "A")
    page = f"/pools/{name}/rounds/{first}"
    token = form_token(browser.get(page).text)
    assert browser.post(f"{page}/void", data={"csrf": token}).status_code == 422  # a reason
    r = browser.post(f"{page}/void", data={"csrf": token, "reason": "cheater"})
    assert r.status_code == 303 and r.headers["location"] == f"{page}?done=void"
    live.app.state.jobs.wait(timeout=30)
    shown = browser.get(page).text
    assert "Voided" in shown and "Unvoid this round" in shown
    marked = browser.get(f"/pools/{name}/players/{steam(1)}").text
    assert f"round {first} voided" not in marked  # before the chart's first round: left out
    again = browser.post(f"{page}/void", data={"csrf": token, "reason": "again"})
    assert again.status_code == 409
    assert browser.post(f"{page}/unvoid", data={"csrf": token}).status_code == 303
    live.app.state.jobs.wait(timeout=30)
    assert "Void this round" in browser.get(page).text


def test_logout_ends_the_session_for_good(live: LiveServer, private: str) -> None:
    b = log_in(live.url)
    stolen = dict(b.cookies)
    token = form_token(b.get("/").text)
    assert b.post("/logout", data={"csrf": token}).status_code == 303
    with httpx.Client(base_url=live.url, cookies=stolen, timeout=30) as replay:
        assert replay.get(f"/pools/{private}").status_code == 404
        assert "Admin login" in replay.get("/").text
    b.close()


def test_a_session_expires(live: LiveServer, private: str, clock: MovableClock) -> None:
    b = log_in(live.url)
    assert b.get(f"/pools/{private}").status_code == 200
    clock.offset += timedelta(hours=live.settings.session_hours, seconds=1)
    assert b.get(f"/pools/{private}").status_code == 404
    b.close()


def test_revoking_the_token_ends_its_sessions(backend: Any, tmp_path: Any) -> None:
    """With the token table (no configured tokens), a session opened with a stored admin
    token stops working as soon as that token is revoked."""
    store = Store(backend, MovableClock())
    store.add_token("admin", "stored-admin-token", "ops")
    settings = Settings(data_dir=tmp_path, rate_public_requests=None, autotune_check_s=0)
    with serving(create_app(settings, store=store)) as url:
        with httpx.Client(
            base_url=url, headers={"Authorization": "Bearer stored-admin-token"}
        ) as api:
            name = f"rv{uuid.uuid4().hex[:8]}"
            assert api.post("/v1/pools", json={"name": name}).status_code == 201
        b = log_in(url, "stored-admin-token")
        assert b.get(f"/pools/{name}").status_code == 200
        assert "admin: ops" in b.get("/").text
        (token,) = [t for t in store.list_tokens() if t.label == "ops"]
        store.revoke_token(token.id)
        assert b.get(f"/pools/{name}").status_code == 404
        b.close()


def test_a_hidden_or_provisional_player_shows_no_rating_to_the_public(
    admin: httpx.Client, server: httpx.Client, anonymous: httpx.Client
) -> None:
    name = f"pv{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 3}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for _ in range(3):
        post_round(server, name, [1], [2], "A")
    post_round(server, name, [1], [3], "A")  # player 3 is provisional, 1 and 2 are not
    page = anonymous.get(f"/pools/{name}/players/{steam(3)}").text
    assert "Provisional" in page and "Model figures" not in page
    assert 'id="admin"' not in page and "csrf" not in page
    rating = admin.get(f"/v1/pools/{name}/players/{steam(3)}").json()["rating"]
    # nowhere but in the ids: the SteamIDs, the pool's random name (pv3f97250326 held 972)
    # and the rounds' random ids (d3fde79721884c… held it too)
    assert str(rating) not in re.sub(r"\d{17}|[0-9a-f]{32}", "", page.replace(name, ""))
    assert "Model figures" in anonymous.get(f"/pools/{name}/players/{steam(1)}").text
    hide = admin.put(f"/v1/pools/{name}/players/{steam(1)}/hidden", json={"hidden": True})
    assert hide.status_code == 200
    assert anonymous.get(f"/pools/{name}/players/{steam(1)}").status_code == 404


def test_a_void_is_marked_on_the_rating_chart_where_it_was(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, threaded_jobs: None
) -> None:
    name = f"vm{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    ids = [post_round(server, name, [1], [2 + i], "A") for i in range(4)]
    r = admin.post(f"/v1/pools/{name}/rounds/{ids[2]}/void", json={"reason": "test"})
    assert r.status_code == 202
    live.app.state.jobs.wait(timeout=30)
    with httpx.Client(base_url=live.url, timeout=30) as anyone:
        page = anyone.get(f"/pools/{name}/players/{steam(1)}").text
    assert page.count('class="point') == 3  # three rounds still rated
    (event,) = re.findall(r'<line class="event" x1="([\d.]+)"[^>]*><title>([^<]*)</title>', page)
    xs = [float(x) for x in re.findall(r'<circle class="point[^"]*" cx="([\d.]+)"', page)]
    assert xs[1] < float(event[0]) < xs[2]  # between the second and the third round left
    assert event[1] == f"round {ids[2]} voided"


def test_the_leaderboard_trend_is_the_change_over_the_last_rounds(
    admin: httpx.Client, server: httpx.Client, anonymous: httpx.Client
) -> None:
    name = f"tr{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(12):  # player 1 beats 12 newcomers; each newcomer plays once
        post_round(server, name, [1], [100 + i], "A")
    history = admin.get(f"/v1/pools/{name}/players/{steam(1)}/history").json()["entries"]
    assert len(history) == 12
    expected = history[0]["after"] - history[9]["before"]  # the last 10 of 12
    page = anonymous.get(f"/pools/{name}").text
    row = re.search(r"Player 1</a></td>.*?<td class=\"num trend\">(.*?)</td>", page, re.S)
    assert row is not None and f"▲ {expected}" in row.group(1)
    assert expected > 0


def test_a_player_page_shows_the_models_own_figures(
    admin: httpx.Client, server: httpx.Client, anonymous: httpx.Client
) -> None:
    synelo = f"fs{uuid.uuid4().hex[:10]}"
    trueskill = f"ft{uuid.uuid4().hex[:10]}"
    for name, model in ((synelo, "synelo"), (trueskill, "trueskill")):
        body = {"name": name, "team_size": 1, "public": True, "model": model}
        body["params"] = {"t_shadow": 1}
        assert admin.post("/v1/pools", json=body).status_code == 201
        post_round(server, name, [1], [2], "A")
    looked = admin.get(f"/v1/pools/{synelo}/players/{steam(1)}").json()
    page = anonymous.get(f"/pools/{synelo}/players/{steam(1)}").text
    rows = dict(_figure_rows(page))
    # each figure with its value and, beside it, what it says in plain words
    assert rows["K (step size, F5)"] == (f"{looked['k']:.4g}", glossary.FIGURES["k"][1])
    assert rows["C (convergence, F3)"][0] == f"{looked['convergence']:.4g}"
    assert "falling towards 0" in rows["C (convergence, F3)"][1]
    skill = admin.get(f"/v1/pools/{trueskill}/players/{steam(1)}").json()["skill"]
    rows = dict(_figure_rows(anonymous.get(f"/pools/{trueskill}/players/{steam(1)}").text))
    assert rows["μ (skill)"][0] == f"{skill['mu']:.4g}"
    assert rows["σ (uncertainty)"][0] == f"{skill['sigma']:.4g}"
    assert all(meaning for _, meaning in rows.values())  # no figure left unexplained


def _figure_rows(page: str) -> list[tuple[str, tuple[str, str]]]:
    """The model figures' table: (name, (value, what it says)) of each row."""
    table = page.split('<table id="figures">', 1)[1].split("</table>", 1)[0]
    return [
        (html.unescape(name), (value, html.unescape(" ".join(meaning.split()))))
        for name, value, meaning in re.findall(
            r"<tr><th>(.*?)</th><td[^>]*>(.*?)</td>\s*<td[^>]*>(.*?)</td></tr>", table, re.S
        )
    ]


def test_an_admin_page_keeps_its_form_token_out_of_the_title(
    private: str, browser: httpx.Client
) -> None:
    for path in (f"/pools/{private}/players/{steam(1)}", f"/pools/{private}"):
        page = browser.get(path).text
        title = re.search(r"<title>(.*?)</title>", page, re.S)
        assert title is not None and len(title.group(1)) < 200
        assert "csrf" not in title.group(1)
        assert page.count('name="csrf"') >= 1


def test_a_new_login_ends_the_browsers_last_session(live: LiveServer, private: str) -> None:
    b = log_in(live.url)
    first = b.cookies["synelo_session"]
    login = b.get("/login?next=/")
    assert "You are logged in" in login.text
    with httpx.Client(base_url=live.url, timeout=30) as again:
        again.cookies.set("synelo_session", first)
        form = again.get("/login").text
        assert "You are logged in" in form
        login = form[form.index('id="login"') :]  # the header's logout form comes first
        r = again.post("/login", data={"token": ADMIN, "csrf": form_token(login)})
        assert r.status_code == 303
    with httpx.Client(base_url=live.url, cookies={"synelo_session": first}, timeout=30) as old:
        assert old.get(f"/pools/{private}").status_code == 404
    b.close()


def test_a_void_of_the_newest_round_is_marked_inside_the_chart(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, threaded_jobs: None
) -> None:
    name = f"vn{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    ids = [post_round(server, name, [1], [2 + i], "A") for i in range(3)]
    assert (
        admin.post(f"/v1/pools/{name}/rounds/{ids[-1]}/void", json={"reason": "t"}).status_code
        == 202
    )
    live.app.state.jobs.wait(timeout=30)
    with httpx.Client(base_url=live.url, timeout=30) as anyone:
        page = anyone.get(f"/pools/{name}/players/{steam(1)}").text
    (x,) = [float(v) for v in re.findall(r'<line class="event" x1="([\d.]+)"', page)]
    xs = [float(v) for v in re.findall(r'<circle class="point[^"]*" cx="([\d.]+)"', page)]
    assert len(xs) == 2 and xs[1] < x <= charts.WIDTH - charts.RIGHT  # past it, in the chart


def test_the_trend_leaves_out_an_admins_set(
    admin: httpx.Client, server: httpx.Client, anonymous: httpx.Client
) -> None:
    name = f"ts{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(3):
        post_round(server, name, [1], [100 + i], "A")
    assert (
        admin.put(f"/v1/pools/{name}/players/{steam(1)}", json={"rating": 2000}).status_code == 200
    )
    post_round(server, name, [1], [200], "B")
    history = admin.get(f"/v1/pools/{name}/players/{steam(1)}/history").json()["entries"]
    expected = sum(e["after"] - e["before"] for e in history if e["kind"] == "round")
    page = anonymous.get(f"/pools/{name}").text
    row = re.search(r"Player 1</a></td>.*?<td class=\"num trend\">(.*?)</td>", page, re.S)
    assert row is not None
    shown = "▲ " + str(expected) if expected > 0 else "▼ " + str(-expected)
    assert shown in row.group(1)


def test_an_admin_sees_hidden_players_on_the_board_and_in_rounds(
    admin: httpx.Client, server: httpx.Client, browser: httpx.Client, anonymous: httpx.Client
) -> None:
    name = f"hd{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    round_id = post_round(server, name, [1], [2], "A")
    hide = admin.put(f"/v1/pools/{name}/players/{steam(2)}/hidden", json={"hidden": True})
    assert hide.status_code == 200
    assert "Player 2" not in anonymous.get(f"/pools/{name}").text
    assert "a hidden player" in anonymous.get(f"/pools/{name}/rounds/{round_id}").text
    board = browser.get(f"/pools/{name}").text
    hidden = board[board.index('id="hidden"') :]
    assert f"/pools/{name}/players/{steam(2)}" in hidden and "Player 2" in hidden
    shown = browser.get(f"/pools/{name}/rounds/{round_id}").text
    assert "Player 2" in shown and '<span class="badge">hidden</span>' in shown
    assert "hidden from the public pages" in browser.get(f"/pools/{name}/players/{steam(2)}").text


def test_page_errors_are_pages(
    anonymous: httpx.Client, private: str, browser: httpx.Client
) -> None:
    bad = browser.get(f"/pools/{private}", params={"page": "0"})
    assert bad.status_code == 422 and bad.headers["content-type"].startswith("text/html")
    assert "page" in bad.text
    missing = anonymous.get("/no/such/page")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    api = anonymous.get("/v1/no/such/route")
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}


def test_the_chart_and_recent_rounds_follow_the_journal(
    admin: httpx.Client, server: httpx.Client, anonymous: httpx.Client
) -> None:
    """The chart draws every journal entry oldest first, labelled with its round (read
    apart from the journal), and the recent list holds the newest 20 rounds even with an
    admin's set among them."""
    name = f"ch{uuid.uuid4().hex[:10]}"
    body = {"name": name, "team_size": 1, "public": True, "params": {"t_shadow": 1}}
    assert admin.post("/v1/pools", json=body).status_code == 201
    for i in range(25):
        post_round(server, name, [1], [100 + i], "A" if i % 4 else "B")
        if i == 20:
            put = {"rating": 1234, "reason": "test"}
            assert admin.put(f"/v1/pools/{name}/players/{steam(1)}", json=put).status_code == 200
    history = admin.get(f"/v1/pools/{name}/players/{steam(1)}/history").json()["entries"]
    assert len(history) == 26
    page = anonymous.get(f"/pools/{name}/players/{steam(1)}").text
    titles = re.findall(r'<circle class="point[^"]*"[^>]*><title>([^<]*)</title>', page)
    expected = [f"{e['after']} after {e['kind']} {e['round_id'] or ''}".strip() for e in history]
    assert titles == expected[::-1]
    table = page.split('<table id="rounds">', 1)[1].split("</table>", 1)[0]
    listed = re.findall(r'/rounds/([^"]+)"', table)
    assert listed == [e["round_id"] for e in history if e["kind"] == "round"][:20]
