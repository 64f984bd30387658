"""The scramble viewer: paste a server's players (or pick a recent round's) and see the best
split for every team size, its gap, its win chance and who moves: the split for the team
size played now first, the smaller ones folded away.

Players are pasted by id or by name: a line that is no player's id but the name of exactly
one of the pool's players stands for that player. A picked round fills the box with its
players' names (their ids where a name would not lead back to them).

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
from synelo.store.repository import Store

router = APIRouter(include_in_schema=False)
PICKABLE = 20  # recent rounds offered to pick players from
MAX_TEXT = 20_000


class Pasted:
    """The viewer's text read as a splits request: one player per line, `A:` or `B:` in
    front of those on a team now; parties one per line, their players between commas."""

    def __init__(self, players: str, parties: str) -> None:
        self.lines: list[tuple[str | None, str]] = []  # (the team it is on now, the player)
        for line in players.splitlines():
            line = line.strip()
            side, colon, rest = line.partition(":")
            team = None
            if colon and side.strip().upper() in ("A", "B") and rest.strip():
                team, line = side.strip().upper(), rest.strip()
            if line:
                self.lines.append((team, line))
        self.parties = [
            [p.strip() for p in line.split(",") if p.strip()]
            for line in parties.splitlines()
            if line.strip()
        ]

    def named(self) -> list[str]:
        """Every player as pasted, in the players' box and among the parties."""
        return [p for _, p in self.lines] + [p for party in self.parties for p in party]

    def request(self, min_k: int, ids: dict[str, str]) -> SplitsIn:
        """The /splits body, each pasted name read as the id `ids` gives it (ValidationError
        when it is not one)."""
        players = [ids.get(p, p) for _, p in self.lines]
        current = {side: [ids.get(p, p) for t, p in self.lines if t == side] for side in "AB"}
        return SplitsIn.model_validate(
            {
                "players": players,
                "current": current if current["A"] or current["B"] else None,
                "parties": [[ids.get(p, p) for p in party] for party in self.parties],
                "min_k": min_k,
            }
        )

    def team_size(self) -> int:
        """The team size played now: the larger team of those pasted on one (0: none)."""
        return max(sum(1 for t, _ in self.lines if t == side) for side in "AB")


def ids_of(store: Store, pool: Pool, pasted: list[str]) -> tuple[dict[str, str], str | None]:
    """The player each pasted name stands for, by name: a player's own id stands for them
    first; else a name that exactly one of the pool's players goes by. An error naming the
    first name several players go by (None: none does)."""
    _, known = store.read_players(pool, pasted)
    named = store.keys_named(pool, [p for p in pasted if p not in known])
    ids = {}
    for name, keys in named.items():
        if len(keys) > 1:
            return {}, f"{name!r}: {len(keys)} players go by this name; give the one's id"
        ids[name] = keys[0]
    return ids, None


def names_for_box(store: Store, pool: Pool, keys: list[str]) -> dict[str, str]:
    """The name to write in the players' box for each of `keys`: their display name when
    it leads back to them alone (`ids_of`), else nothing (the id is written)."""
    _, rows = store.read_players(pool, keys)
    names = {key: row.name for key, row in rows.items() if row.name}
    _, taken = store.read_players(pool, list(names.values()))  # names that are ids too
    owners = store.keys_named(pool, list(names.values()))
    return {
        key: name
        for key, name in names.items()
        if name not in taken and owners.get(name) == [key] and name == name.strip()
    }


async def _split(
    request: Request, store: Store, pool: Pool, pasted: Pasted, min_k: int
) -> tuple[SplitsOut | None, dict[str, str], str | None]:
    """The splits of the pasted players as `POST …/splits` answers them, the id each pasted
    name stood for, and the error that stopped them (None: none)."""
    if not pasted.lines:
        return None, {}, None
    ids, error = await run_in_threadpool(ids_of, store, pool, pasted.named())
    if error is not None:
        return None, ids, error
    try:
        state = request.app.state
        body = pasted.request(min_k, ids)
        answer = SplitsOut.model_validate_json(
            await find_splits(pool, body, store, state.settings, state.balance_gate)
        )
    except (ValidationError, RequestValidationError) as exc:
        return None, ids, problems(exc.errors())
    except HTTPException as exc:
        return None, ids, str(exc.detail)
    return answer, ids, None


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
    if picked is not None:  # a recent round's players, by name, on the teams they played for
        box = await run_in_threadpool(names_for_box, store, found, [*picked[3], *picked[4]])
        players = "\n".join(
            f"{side}: {box.get(p, p)}"
            for side, team in (("A", picked[3]), ("B", picked[4]))
            for p in team
        )
    pasted = Pasted(players, parties)
    answer, ids, error = await _split(request, store, found, pasted, min_k)
    names: dict[str, str] = {}
    now: dict[str, str] = {}  # each player on a team now: their team, by normalised id
    first = None
    if answer is not None:
        keys = [*answer.splits[0].A, *answer.splits[0].B, *answer.splits[0].bench]
        _, rows = await run_in_threadpool(store.read_players, found, keys)
        names = {key: row.name for key, row in rows.items() if row.name}
        for side in "AB":
            on = [ids.get(p, p) for t, p in pasted.lines if t == side]
            now.update((key, side) for key in normalize_ids(on, found.player_ids, ("current",)))
        sizes = [s.k for s in answer.splits]
        first = pasted.team_size() if pasted.team_size() in sizes else max(sizes)
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
        first=first,
        error=error,
        names=names,
        now=now,
    )
