"""An admin's changes to a pool's players and rounds: set a rating, reset a player, hide or
show one, start a new season, void or unvoid a round (which starts a re-rate job). The API's
routes and the admin pages both run these functions, so that a change checks, logs and
answers alike wherever it is made; `who` is whom the admin log names. A refusal is the API's
own (an HTTPException, or a 422 naming the field), which a page shows as its refusal."""

from __future__ import annotations

from fastapi import HTTPException

from synelo.domain import Job, PlayerRow, Pool, UnknownPool, UnknownRound, pool_model
from synelo.rerate.job import JobRunner
from synelo.schemas import HiddenIn, PlayerOut, RatingIn, SeasonIn, SeasonOut
from synelo.service.api.pool_settings import SET_LIMIT, ratable
from synelo.service.api.views import placed, player_out
from synelo.service.ids import invalid, normalize_id
from synelo.store.generations import RerateStore
from synelo.store.repository import Store
from synelo.store.seasons import SeasonDone


def set_rating(store: Store, pool: Pool, steam_id: str, body: RatingIn, who: str) -> PlayerOut:
    """Set a player's rating, within what the pool's model takes (a 422 at body.rating
    otherwise); the player as the write left them, with their board place."""
    # its model and bounds as they stand (a re-rate may change them)
    pool = store.get_pool(pool.name)
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    low, high = (
        (pool.params.r_min, pool.params.r_max) if pool.is_synelo else (-SET_LIMIT, SET_LIMIT)
    )
    if not low <= body.rating <= high:
        raise invalid(("body", "rating"), f"rating must be within {low}…{high}", value=body.rating)
    if not pool.is_synelo and not ratable(pool_model(pool), body.rating):
        raise invalid(
            ("body", "rating"),
            f"model {pool.model} cannot rate a round from a rating of {body.rating}",
            value=body.rating,
        )
    # the answer is built inside the write's transaction: if it fails, nothing was written
    answer = store.set_rating(
        pool.name,
        key,
        body.rating,
        who,
        body.reason,
        view=lambda pool, row: player_out(key, row, pool, store, None),
    )
    return placed(answer, pool, store)


def reset_player(
    store: Store, pool: Pool, steam_id: str, reason: str | None, who: str
) -> PlayerOut:
    """Reset a player to a new player's rating and 0 rounds; a 404 if the pool was deleted
    meanwhile."""
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))
    try:
        answer = store.reset_player(
            pool.name,
            key,
            who,
            reason,
            view=lambda pool, row: player_out(key, row, pool, store, None),
        )
        return placed(answer, pool, store)
    except UnknownPool:  # deleted since the request began
        raise HTTPException(404, "unknown pool") from None


def hide_player(store: Store, pool: Pool, steam_id: str, body: HiddenIn, who: str) -> PlayerOut:
    """Hide a player from the pool's public lists, or show them again; a 404 for a player
    the pool has never rated, or a pool deleted meanwhile."""
    key = normalize_id(steam_id, pool.player_ids, ("path", "steam_id"))

    def view(current: Pool, row: PlayerRow | None) -> PlayerOut:
        if row is None:
            raise HTTPException(404, f"pool {current.name!r} has never rated player {key}")
        return player_out(key, row, current, store, None)

    try:
        answer = store.set_hidden(pool.name, key, body.hidden, who, body.reason, view=view)
        return placed(answer, pool, store)
    except UnknownPool:  # deleted since the request began
        raise HTTPException(404, "unknown pool") from None


def start_season(store: Store, pool: Pool, body: SeasonIn, who: str) -> SeasonOut:
    """A new season of the pool (`store.seasons`): every rating pulled `body.fraction` of
    the way back toward the pool's mean (the model's default share when None); a 404 if
    the pool was deleted meanwhile."""

    def view(pool: Pool, done: SeasonDone) -> SeasonOut:
        return SeasonOut(
            pool=pool.name,
            fraction=done.fraction,
            default=done.default,
            players=done.players,
            seq=done.seq,
        )

    try:
        return store.start_season(pool.name, body.fraction, who, body.reason, view=view)
    except UnknownPool:  # deleted since the request began
        raise HTTPException(404, "unknown pool") from None


def start_job(
    rerate: RerateStore,
    jobs: JobRunner,
    pool: Pool,
    kind: str,
    spec: dict[str, object],
    who: str,
) -> Job:
    """Start a re-rate job of `kind` on the pool: JobRunning if one runs on it already, a
    404 for a round the pool does not have, a 409 for a round voided (or not) already."""
    try:
        fresh, job = rerate.start(pool.name, kind, spec, who)
    except UnknownRound as exc:
        raise HTTPException(404, f"pool {pool.name!r} has no round {exc.args[0]!r}") from None
    except ValueError as exc:
        raise HTTPException(409, str(exc)) from None
    jobs.start(fresh, job)
    return job


def start_advice(rerate: RerateStore, jobs: JobRunner, pool: Pool, who: str) -> Job:
    """Start an advise job on the pool (`rerate.advice`): a 409 below the rounds advise needs
    (`evaluation.advise.MIN_ROUNDS`), JobRunning if a job runs on the pool already."""
    from synelo.evaluation.advise import MIN_ROUNDS  # not at start-up: it brings SciPy

    if pool.rated < MIN_ROUNDS:
        raise HTTPException(
            409,
            f"pool {pool.name!r} has {pool.rated:,} rounds: advise needs at least "
            f"{MIN_ROUNDS:,} to tune on the older ones and score on the newer",
        )
    return start_job(rerate, jobs, pool, "advise", {"at_rounds": pool.rated}, who)


def cancel_job(rerate: RerateStore, pool: Pool, job_id: int, who: str) -> Job:
    """Cancel the pool's running advise job (`store.jobs.cancel_job`): the job, now reading
    cancelled, its slot free; a 404 for no such job of the pool, a 409 for a job that is not
    an advise job (a re-rate cannot stop half swapped) or has ended."""
    found = rerate.cancel(pool, job_id, who)
    if found is None:
        raise HTTPException(404, f"pool {pool.name!r} has no job {job_id}")
    job, cancelled = found
    if cancelled:
        return job
    if job.kind != "advise":
        raise HTTPException(
            409,
            f"job {job_id} is a {job.kind} job: only an advise job can be cancelled (a "
            "re-rate runs to its end)",
        )
    raise HTTPException(409, f"job {job_id} is not running: it has ended ({job.status})")


def void_round(
    rerate: RerateStore, jobs: JobRunner, pool: Pool, round_id: str, reason: str, who: str
) -> Job:
    """Take a round out of the ratings: the job that re-rates the pool without it."""
    return start_job(rerate, jobs, pool, "void", {"round_id": round_id, "reason": reason}, who)


def unvoid_round(
    rerate: RerateStore, jobs: JobRunner, pool: Pool, round_id: str, reason: str | None, who: str
) -> Job:
    """Put a voided round back: the job that re-rates the pool with it."""
    spec: dict[str, object] = {"round_id": round_id}
    if reason is not None:
        spec["reason"] = reason
    return start_job(rerate, jobs, pool, "unvoid", spec, who)
