"""How stored pools, players and rounds look in answers, for the API's routes and the pages
alike: a player as a game server sees them, a player and a round as public pages show them
(no provisional rating, hidden players masked), a pool as an admin sees it. A page that shows
what an endpoint answers builds it with the same function, so the two never disagree."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import orjson
from fastapi.responses import JSONResponse

from synelo.domain import (
    POOL_RULES,
    Change,
    Job,
    JobRunning,
    JournalEntry,
    PlayerRow,
    Pool,
    RoundView,
    pool_model,
)
from synelo.ratings import is_stale, is_visible, k_factor, shown_probability
from synelo.schemas import (
    AdviceOut,
    JobOut,
    PlayerOut,
    PoolOut,
    PublicEntryOut,
    PublicPlayerOut,
    PublicRoundOut,
    PublicRoundPlayerOut,
)
from synelo.service.ids import steam64_of
from synelo.store.advice import stale
from synelo.store.repository import Store

# a chance is given to the percent: at full precision, a round's chance and the other
# players' ratings would give a provisional player's rating away exactly
CHANCE_DIGITS = 2
TREND = 10  # a board's trend: a player's change over their last this many rounds
BARS = 20  # ranges of a board's rating distribution


def player_out(
    key: str, row: PlayerRow | None, pool: Pool, store: Store, place: int | None
) -> PlayerOut:
    """A player as the game server sees it, at `place` on the public board (None: not
    listed). Unknown players are new: in SynElo R_0, 0 rounds, C = 1; in another model its
    new player's state."""
    params = pool.params
    if pool.is_synelo:
        if row is None:
            row = PlayerRow(key, params.r0, 0, None, 1.0)
        skill = {
            "convergence": row.convergence,
            "k": k_factor(row.convergence, row.rating, params),
        }
        rating = row.rating
    else:
        model = pool_model(pool)
        state = model.decode(orjson.loads(row.state) if row and row.state else {})
        skill = model.fields(state)
        rating = row.rating if row else round(model.rating(state))
    rounds = row.rounds_played if row else 0
    return PlayerOut(
        steam_id=key,
        name=row.name if row else None,
        rating=rating,
        visible=is_visible(rounds, params),
        rounds_played=rounds,
        stale=is_stale(row.last_played if row else None, store.clock(), params),
        last_played=row.last_played if row else None,
        convergence=skill["convergence"] if pool.is_synelo else None,
        k=skill["k"] if pool.is_synelo else None,
        skill=skill,
        hidden=row.hidden if row else False,
        place=place,
    )


def placed(answer: PlayerOut, pool: Pool, store: Store) -> PlayerOut:
    """An admin write's answer with the player's board place as the write left it: the board
    is read on a connection of its own, which cannot see into the write's transaction, so
    only once that is committed."""
    place = store.public_places(pool, [answer.steam_id]).get(answer.steam_id)
    return answer.model_copy(update={"place": place})


def pool_out(pool: Pool) -> PoolOut:
    params = dict(pool.model_params)
    if not pool.is_synelo:
        params.update({name: getattr(pool.params, name) for name in POOL_RULES})
    return PoolOut(
        name=pool.name,
        model=pool.model,
        team_size=pool.team_size,
        kmax=pool.team_size,
        theta=pool.params.theta if pool.is_synelo else None,
        player_ids=pool.player_ids,
        rounds=pool.rounds,
        voided=pool.voided,
        autotune=None if pool.autotune is None else dict(pool.autotune),
        public=pool.public,
        created_at=pool.created_at,
        params=params,
    )


def board_search(pool: Pool, search: str | None) -> str | None:
    """What a board's search looks for: in a steam pool a Steam2 or Steam3 id stands for
    its SteamID64; any other text for itself."""
    if search and pool.player_ids == "steam":
        return steam64_of(search) or search
    return search or None


def public_player(row: PlayerRow, pool: Pool, place: int | None) -> PublicPlayerOut:
    """A player as public pages show them: no rating while provisional."""
    left = max(0, pool.params.t_shadow - row.rounds_played)
    return PublicPlayerOut(
        steam_id=row.player_key,
        name=row.name,
        rounds_played=row.rounds_played,
        last_played=row.last_played,
        provisional=left > 0,
        rounds_left=left,
        rating=None if left > 0 else row.rating,
        place=place,
    )


def shown_entries(pool: Pool, entries: list[JournalEntry]) -> list[JournalEntry]:
    """A player's journal with each round's chance as the pool shows it (F1t): a SynElo
    journal keeps F2's P = σ(x), which its window reads back and K·(S − P) recomputes a step
    by; the round's page and predict show σ(x/T), and so must the player's page."""
    t = pool.params.temperature if pool.is_synelo else 1.0
    if t == 1.0:
        return entries
    return [
        e
        if e.p is None or not 0.0 < e.p < 1.0
        else replace(e, p=shown_probability(math.log(e.p / (1.0 - e.p)), t))
        for e in entries
    ]


def public_entries(
    entries: list[JournalEntry], player: PublicPlayerOut, exact: bool = False
) -> list[PublicEntryOut]:
    """A player's journal as public pages show it (`shown_entries` first): no rating while
    provisional, chances to the percent unless `exact` (a reader with a token)."""
    shown = not player.provisional
    digits = None if exact else CHANCE_DIGITS
    return [
        PublicEntryOut(
            kind=e.kind,
            round_id=e.round_id,
            team=e.team,
            p=None if e.p is None else _chance(e.p, digits),
            s=e.s,
            before=e.before if shown else None,
            after=e.after if shown else None,
            at=e.at,
        )
        for e in entries
    ]


def _chance(p: float, digits: int | None) -> float:
    return p if digits is None else round(p, digits)


def public_round(view: RoundView, admin: bool = False, exact: bool = False) -> PublicRoundOut:
    """A round as public pages show it: both rosters with names; each player's change only
    when they are rated in it, not provisional now and not hidden (a hidden player is
    named "a hidden player", without id). An admin's page (`admin`) shows hidden players
    as they are, marked."""
    changes = {player: (team, before, after) for player, team, before, after in view.changes}
    sides: dict[str, list[PublicRoundPlayerOut]] = {}
    for side, roster in (("A", view.team_a), ("B", view.team_b)):
        rated = [p for p, (team, _, _) in changes.items() if team == side]
        listed = []
        for player in dict.fromkeys([*roster, *rated]):
            hidden = player in view.hidden
            masked = hidden and not admin
            provisional = player in view.provisional
            shown = player in changes and not masked and not provisional
            before, after = changes[player][1:] if shown else (None, None)
            listed.append(
                PublicRoundPlayerOut(
                    steam_id=None if masked else player,
                    name="a hidden player" if masked else view.names.get(player, player),
                    provisional=provisional and not masked,
                    before=before,
                    after=after,
                )
            )
        sides[side] = listed
    return PublicRoundOut(
        round_id=view.round_id,
        seq=view.seq,
        at=view.at,
        map=view.map,
        winner=view.winner,
        p_a=_chance(view.p_a, None if exact else CHANCE_DIGITS),
        voided=view.voided,
        A=sides["A"],
        B=sides["B"],
    )


def job_out(job: Job) -> JobOut:
    """A background job as `GET /v1/pools/{pool}/jobs/{id}` answers it."""
    return JobOut(
        id=job.id,
        pool=job.pool,
        kind=job.kind,  # type: ignore[arg-type]
        status=job.status,
        phase=job.phase,
        total=job.total,
        done=job.done,
        error=job.error,
        actor=job.actor,
        reason=job.spec.get("reason"),
        spec=job.spec,
        created_at=job.created_at,
        updated_at=job.updated_at,
        finished_at=job.finished_at,
    )


def advice_out(pool: Pool, change: Change) -> AdviceOut:
    """A pool's advice as its admin log keeps it (`store.advice`)."""
    value = change.value or {}
    why = stale(pool, value)
    return AdviceOut(
        pool=pool.name,
        job=value.get("job"),
        actor=change.actor,
        at=change.created_at,
        verdict=value.get("verdict", ""),
        recommended=value.get("recommended", {}),
        switch=None if why is not None else value.get("switch"),
        stale=why,
        runner_up=value.get("runner_up"),
        over_current=value.get("over_current"),
        rows=value.get("rows", []),
        warnings=value.get("warnings", []),
        details=value,
    )


def accepted(pool: Pool, start: Callable[[], Job]) -> JSONResponse:
    """Start a background job (`start`): 202 with the job and where to follow it, 409 with
    the running job's id if one runs on the pool (a re-rate, or an advise job)."""
    try:
        job = start()
    except JobRunning as exc:
        return JSONResponse(
            {"detail": f"a job of pool {pool.name!r} is running", "job_id": exc.job_id},
            status_code=409,
            headers={"Location": f"/v1/pools/{pool.name}/jobs/{exc.job_id}"},
        )
    return JSONResponse(
        job_out(job).model_dump(mode="json"),
        status_code=202,
        headers={"Location": f"/v1/pools/{pool.name}/jobs/{job.id}"},
    )


def change_steps(changed: Mapping[str, Sequence[Any]]) -> str:
    """What a re-rate changed (its spec's `changed`, {name: [was, becomes]}), as people
    read it: `Θ 1200 → 900, k_max 72 → 60, autotune fitting theta → off`."""
    return ", ".join(
        f"{'Θ' if key == 'theta' else key} {_value(key, was)} → {_value(key, becomes)}"
        for key, (was, becomes) in changed.items()
    )


def _value(key: str, value: object) -> str:
    """A setting's value in a sentence: 900 not 900.0, — for none, an auto-tuning by
    what it fits (off for none)."""
    if key == "autotune":
        return "off" if not isinstance(value, dict) else "fitting " + ", ".join(value["fit"])
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
