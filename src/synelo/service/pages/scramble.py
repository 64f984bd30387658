"""The scramble viewer: paste a server's players (or pick a recent round's) and see the best
split for every team size, its gap, its win chance and who moves.

It answers with what `POST /v1/pools/{pool}/splits` answers (the same function,
`synelo.service.api.balancing.find_splits`, called with the same checked request), so the
viewer and a game server can never disagree. It is an admin's page: a split's gap tells a
provisional player's rating, which a public page never shows, and each view runs the solver.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from synelo.domain import Pool, UnknownPool
from synelo.schemas import POOL_NAME, SplitsIn, SplitsOut
from synelo.service.api.balancing import find_splits
from synelo.service.deps import StoreDep
from synelo.service.ids import normalize_ids
from synelo.service.pages.access import Refused, admin_session
from synelo.service.pages.templating import problems, render

router = APIRouter(include_in_schema=False)
PICKABLE = 20  # recent rounds offered to pick players from
MAX_TEXT = 20_000


class Pasted:
    """The viewer's text read as a splits request: one player per line, `A:` or `B:` in
    front of those on a team now; parties one per line, their players between commas."""

    def __init__(self, players: str, parties: str) -> None:
        self.players: list[str] = []
        self.current: dict[str, list[str]] = {"A": [], "B": []}
        for line in players.splitlines():
            line = line.strip()
            side, colon, rest = line.partition(":")
            if colon and side.strip().upper() in ("A", "B") and rest.strip():
                line = rest.strip()
                self.current[side.strip().upper()].append(line)
            if line:
                self.players.append(line)
        self.parties = [
            [p.strip() for p in line.split(",") if p.strip()]
            for line in parties.splitlines()
            if line.strip()
        ]

    def request(self, min_k: int) -> SplitsIn:
        """The /splits body (ValidationError when it is not one)."""
        has_current = self.current["A"] or self.current["B"]
        return SplitsIn.model_validate(
            {
                "players": self.players,
                "current": self.current if has_current else None,
                "parties": self.parties,
                "min_k": min_k,
            }
        )


@router.get("/pools/{pool}/scramble", response_class=HTMLResponse)
async def scramble(
    request: Request,
    store: StoreDep,
    pool: Annotated[str, Path(pattern=POOL_NAME)],
    players: Annotated[str, Query(max_length=MAX_TEXT)] = "",
    parties: Annotated[str, Query(max_length=MAX_TEXT)] = "",
    round: Annotated[str | None, Query(max_length=128)] = None,
    min_k: Annotated[int, Query(ge=1, le=64)] = 2,
) -> HTMLResponse:
    if await admin_session(request) is None:
        raise Refused(401, "The scramble viewer is for admins: log in first.")
    try:
        found: Pool = await run_in_threadpool(store.get_pool, pool)
    except UnknownPool:
        raise Refused(404, f"There is no pool named {pool}.") from None
    recent = await run_in_threadpool(store.recent_rosters, found, PICKABLE)
    picked = next((r for r in recent if r[0] == round), None)
    if picked is not None:  # a recent round's players, on the teams they played for
        players = "\n".join([*(f"A: {p}" for p in picked[3]), *(f"B: {p}" for p in picked[4])])
    pasted = Pasted(players, parties)
    answer: SplitsOut | None = None
    error = None
    if pasted.players:
        try:
            state = request.app.state
            answer = SplitsOut.model_validate_json(
                await find_splits(
                    found, pasted.request(min_k), store, state.settings, state.balance_gate
                )
            )
        except ValidationError as exc:
            error = problems(exc.errors())
        except RequestValidationError as exc:
            error = problems(exc.errors())
        except HTTPException as exc:
            error = str(exc.detail)
    names: dict[str, str] = {}
    now: dict[str, str] = {}  # each player on a team now: their team, by normalised id
    if answer is not None:
        keys = [*answer.splits[0].A, *answer.splits[0].B, *answer.splits[0].bench]
        _, rows = await run_in_threadpool(store.read_players, found, keys)
        names = {key: row.name for key, row in rows.items() if row.name}
        for side, on in pasted.current.items():
            now.update((key, side) for key in normalize_ids(on, found.player_ids, ("current",)))
    return render(
        request,
        "scramble.html",
        status=422 if error else 200,
        pool=found,
        recent=recent,
        players=players,
        parties=parties,
        min_k=min_k,
        answer=answer,
        error=error,
        names=names,
        now=now,
    )
