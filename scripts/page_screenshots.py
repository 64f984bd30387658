"""Screenshots of the public pages for the docs (docs/pages/*.png), desktop and phone width.

Runs a real service on a temporary SQLite database, feeds it a simulated league (the NS2-like
world of `synelo simulate-history`, 2,400 rounds of 4v4 among 80 players, an hour apart on the
service's clock, from two servers, on four maps, each team playing RED or BLU), voids one
round, and photographs each page in Debian's Chromium through Playwright, the admin's pages
logged in:

    .venv/bin/python scripts/page_screenshots.py
"""

from __future__ import annotations

import re
import socket
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import uvicorn
from playwright.sync_api import sync_playwright

from synelo.config import Settings
from synelo.service.app import create_app
from synelo.sim.history import HistoryWorldConfig, generate

OUT = Path(__file__).resolve().parent.parent / "docs" / "pages"
ADMIN, SERVER = "admin-screenshots", "server-screenshots"
SIZES = {"desktop": (1200, 900), "phone": (390, 844)}
MAPS = ("koth_viaduct", "cp_process_final", "pl_upward", "ctf_2fort")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    settings = Settings(
        data_dir=folder,
        database_url=f"sqlite:///{folder / 'synelo.db'}",
        admin_tokens=[ADMIN],
        server_tokens=[SERVER],
        rate_server_rounds=None,
        rate_server_requests=None,
        rate_address_requests=None,
        rate_public_requests=None,
    )
    from synelo.store.engine import create_store_engine, migrate

    migrate(create_store_engine(settings.database_url))
    port = free_port()
    now = [datetime.now(UTC) - timedelta(hours=2420)]  # the service's clock, moved per round
    app = create_app(settings, clock=lambda: now[0])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    admin = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ADMIN}"})
    game = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {SERVER}"})
    admin.post(
        "/v1/pools",
        json={
            "name": "casual",
            "team_size": 4,
            "player_ids": "text",
            "public": True,
            "params": {"t_shadow": 10},
        },
    ).raise_for_status()
    lines, _ = generate(HistoryWorldConfig(players=80, matches=2400, team_size=4, seed=3))
    for i, line in enumerate(lines[1:]):
        body = {
            "round_id": line["id"],
            "server_id": ("eu-1", "us-1")[i % 3 == 0],
            "map": MAPS[i % len(MAPS)],
            "winner": line["winner"],
            "teams": line["teams"],
            "names": {
                p: f"{p[0].upper()}layer {int(p[1:])}"
                for side in line["teams"].values()
                for p in side
            },
            "sides": {"A": "RED", "B": "BLU"} if i % 2 else {"A": "BLU", "B": "RED"},
        }
        game.post("/v1/pools/casual/rounds", json=body).raise_for_status()
        now[0] += timedelta(hours=1)
    admin.put("/v1/pools/casual/players/p0007", json={"rating": 1100}).raise_for_status()
    top = game.get("/v1/public/pools/casual/leaderboard?limit=1").json()["players"][0]["steam_id"]
    theirs = admin.get(f"/v1/pools/casual/players/{top}/history?limit=40").json()["entries"]
    voided = theirs[-10]["round_id"]
    job = admin.post(f"/v1/pools/casual/rounds/{voided}/void", json={"reason": "a demo void"})
    job.raise_for_status()
    while admin.get(job.headers["location"]).json()["status"] == "running":
        time.sleep(0.2)
    public = {
        "index": "/",
        "leaderboard": "/pools/casual",
        "player": f"/pools/casual/players/{top}",
        "round": f"/pools/casual/rounds/{lines[-1]['id']}",
        "health": "/pools/casual/health",
        "servers": "/pools/casual/servers",
        "server": "/pools/casual/servers/eu-1",
        "login": "/login",
    }
    logged_in = {
        "admin-player": f"/pools/casual/players/{top}",
        "scramble": f"/pools/casual/scramble?round={lines[-1]['id']}",
        "settings": "/pools/casual/settings",
    }
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for size, (width, height) in SIZES.items():
            for scheme in ("light", "dark"):
                context = browser.new_context(
                    viewport={"width": width, "height": height}, color_scheme=scheme
                )
                page = context.new_page()
                for name, path in public.items():
                    page.goto(url + path)
                    if scheme == "light" or (name, size) == ("leaderboard", "phone"):
                        page.screenshot(
                            path=str(OUT / f"{name}-{size}-{scheme}.png"), full_page=True
                        )
                if scheme == "light":
                    page.goto(url + "/login")
                    page.fill("input[name=token]", ADMIN)
                    page.click("#login button[type=submit]")
                    page.wait_for_url(re.compile(r".*/$"))
                    for name, path in logged_in.items():
                        page.goto(url + path)
                        page.screenshot(
                            path=str(OUT / f"{name}-{size}-{scheme}.png"), full_page=True
                        )
                context.close()
        browser.close()
    server.should_exit = True
    print(f"wrote the screenshots to {OUT}")


if __name__ == "__main__":
    main()
