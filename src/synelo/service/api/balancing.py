"""Scramble splits, mid-round autobalance and predictions, on the pool's current ratings:
the work behind the balance routes and the scramble viewer, which both call it.

Balancing evens out team sums of each player's strength (the pool's model says what it is:
SynElo's and Elo's rating, TrueSkill's μ…); the win chance of a split is the model's own
prediction for it. A model whose split mode is "all-play" (whr) seats everyone instead, ⌊n/2⌋
against ⌈n/2⌉, and balances by its own logit P(A), extra-player advantage included (W12); it
places an odd joiner by that logit too. Any pool may ask for an all-play split (`mode`): a
model without a split logit then balances the sums, the least |Σ_A − Σ_B| (W12 by F1's sums).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, NamedTuple

import orjson
from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError
from starlette.concurrency import run_in_threadpool

from synelo.balance import all_play_split, best_splits, min_swaps, place_joiner, transfer_moves
from synelo.balance.allplay import all_play_by_sums
from synelo.balance.autobalance import Move, Odds, Rebalance
from synelo.balance.solver import Split, SplitSet
from synelo.config import Settings
from synelo.domain import Pool, UnknownPool, pool_model
from synelo.models import Model, RoundFacts, model_class
from synelo.ratings import roster_probability
from synelo.schemas import (
    AutobalanceIn,
    AutobalanceOut,
    MoveOut,
    PredictIn,
    PredictOut,
    ResultOut,
    SplitsIn,
)
from synelo.service.api.roster import Roster
from synelo.service.api.round_body import check_round, round_extras
from synelo.service.gate import BalanceGate, Busy
from synelo.service.ids import Loc, invalid, normalize_ids
from synelo.store.repository import Store


async def find_splits(
    pool: Pool, body: SplitsIn, store: Store, settings: Settings, gate: BalanceGate
) -> bytes:
    """The answer to a splits request (`SplitsOut`'s JSON), within the budget of `settings`
    counted from now: checked on the event loop, then read, solved and written out in the
    thread pool, in one hop, once `gate` gives this request its turn; a 503 with Retry-After
    when the budget runs out before the turn comes. `pool` may be as this worker read it
    long ago (`deps.get_pool_read_again`): the read in the thread reads it again, with the
    ratings, and a request it fails is checked again against the pool as it stands."""
    began = time.perf_counter()
    asked = await _checked_against(pool, body, store)
    try:
        deadline = began + settings.balance_budget_ms / 1000
        async with gate.turn(deadline):
            return await run_in_threadpool(_solve, asked, body, store, settings, deadline, began)
    except Busy:
        raise HTTPException(
            503,
            "the split solver is busy with other requests; retry",
            headers={"Retry-After": "1"},
        ) from None


SplitMode = Literal["even", "all-play"]


class _Asked(NamedTuple):
    """A splits request checked against its pool: the players, their parties and rules."""

    roster: Roster
    current: tuple[list[int], list[int]] | None
    parties: list[list[int]]
    must: list[int]
    max_k: int
    mode: SplitMode


def _checked(pool: Pool, body: SplitsIn) -> _Asked:
    """The request's players as indices, or a 422 naming the field that does not fit."""
    # the model's class says its split mode: building the model (its parameters encoded
    # and looked up) cost a tenth of a 32-player split's solve per request
    mode: SplitMode = body.mode or model_class(pool.model).split_mode
    roster = Roster(pool, normalize_ids(body.players, pool.player_ids, ("body", "players")))
    n = len(roster.keys)
    current = None
    if body.current is not None:
        seen: dict[str, Loc] = {}
        current = (
            roster.members(body.current.A, ("body", "current", "A"), seen),
            roster.members(body.current.B, ("body", "current", "B"), seen),
        )
    parties = roster.parties(body.parties, "players")
    must = roster.members(body.must_play, ("body", "must_play"))
    max_k = n // 2 if body.max_k is None else body.max_k
    if 2 * max_k > n:
        raise invalid(
            ("body", "max_k"),
            f"team size {max_k} needs {2 * max_k} players; {n} were given",
            value=body.max_k,
        )
    if body.min_k > max_k:
        raise invalid(
            ("body", "min_k"), f"min_k {body.min_k} is larger than max_k {max_k}", value=body.min_k
        )
    if mode == "all-play":
        if max_k < n // 2:  # everyone plays: must_play holds whoever it names
            raise invalid(
                ("body", "max_k"),
                f"an all-play split seats all {n} players, {n // 2} against {n - n // 2}; "
                f"max_k {max_k} is smaller",
                value=body.max_k,
            )
    elif len(must) > 2 * max_k:
        raise invalid(
            ("body", "must_play"),
            f"{len(must)} players must play but the largest team size ({max_k}) seats {2 * max_k}",
            value=len(must),
        )
    return _Asked(roster, current, parties, must, max_k, mode)


async def _checked_against(pool: Pool, body: SplitsIn, store: Store) -> _Asked:
    """The request checked against `pool`; if it fails the checks and this worker read the
    pool over `POOL_MEMORY_S` ago, checked again against the pool read now (in the thread
    pool): another worker may have given its name to a new pool, of other ids. A stream of
    bad requests so reads the pool once a second at most."""
    try:
        return _checked(pool, body)
    except RequestValidationError:
        if store.known_pool(pool.name) is not None:
            raise
    return _checked(await run_in_threadpool(store.get_pool, pool.name), body)


def _solve(
    asked: _Asked,
    body: SplitsIn,
    store: Store,
    settings: Settings,
    deadline: float,
    began: float,
) -> bytes:
    """Read the ratings and search until `deadline` (time.perf_counter), in a thread: it
    is CPU-bound and reads the database."""
    asked = _read_again(asked, body, store)
    roster = asked.roster
    pool = roster.pool
    context: dict[str, Any] = {}
    if asked.mode == "all-play":
        result, context = _all_play(asked, body, store, settings, deadline)
    else:
        result = best_splits(
            roster.ratings(store),
            theta=pool.params.prediction_scale(),  # SynElo's Θ·T (F1t) for the P it shows
            min_k=body.min_k,
            max_k=asked.max_k,
            must_play=asked.must,
            parties=asked.parties,
            current=asked.current,
            prefer=body.prefer,
            n_max=settings.n_max,
            budget_s=max(0.0, deadline - time.perf_counter()),
        )
    keys = roster.keys
    splits = result.splits
    if not pool.is_synelo:
        model, states = roster.states(store)
        facts = [
            RoundFacts(tuple(keys[i] for i in s.a), tuple(keys[i] for i in s.b), "A")
            for s in splits
        ]
        wanted = {k for f in facts for k in model.context_keys(f)} - context.keys()
        context = {**context, **store.read_context(pool, sorted(wanted))}
        splits = tuple(
            replace(s, p_a=model.predict(states, f, context))
            for s, f in zip(splits, facts, strict=True)
        )
    elapsed_ms = round((time.perf_counter() - began) * 1000, 3)
    return splits_json(asked.mode, result.solver, splits, keys, elapsed_ms)


def _read_again(asked: _Asked, body: SplitsIn, store: Store) -> _Asked:
    """The request, its pool read again with its players' ratings (one snapshot), and
    checked again if the pool changed since it was checked: another worker may have deleted
    it and made a new one under its name (SQLite may even give it the same id), or a re-rate
    may have given it another model, whose split mode differs."""
    checked = asked.roster.pool
    try:
        pool = asked.roster.read(store)
    except UnknownPool:  # a 404 if there is no pool of this name now
        pool = store.get_pool(checked.name)
    if (pool.id, pool.player_ids, pool.model) == (checked.id, checked.player_ids, checked.model):
        return asked
    again = _checked(pool, body)
    again.roster.read(store)
    return again


def splits_json(
    mode: SplitMode,
    solver: str,
    splits: Sequence[Split],
    keys: Sequence[str],
    elapsed_ms: float,
) -> bytes:
    """The answer to a splits request: `SplitsOut`'s JSON, byte for byte, built with orjson
    in the solver's thread (for 32 players and every team size, the models built here took
    0.044 ms and FastAPI's writing of them on the event loop 0.016 ms; this takes 0.024 ms).
    A model's prediction may be a numpy scalar, which orjson refuses: hence the
    conversions."""
    return orjson.dumps(
        {
            "splits": [
                {
                    "k": int(s.k),
                    "A": [keys[i] for i in s.a],
                    "B": [keys[i] for i in s.b],
                    "bench": [keys[i] for i in s.bench],
                    "sum_a": int(s.sum_a),
                    "sum_b": int(s.sum_b),
                    "gap": int(s.gap),
                    "p_a": float(s.p_a),
                    "optimal": bool(s.optimal),
                    "moved": None if s.moved is None else int(s.moved),
                    "moved_optimal": None if s.moved_optimal is None else bool(s.moved_optimal),
                    "split_parties": [[keys[i] for i in p] for p in s.split_parties],
                    "logit": None if s.logit is None else float(s.logit),
                }
                for s in splits
            ],
            "mode": mode,
            "solver": solver,
            "elapsed_ms": elapsed_ms,
        }
    )


def _all_play(
    asked: _Asked, body: SplitsIn, store: Store, settings: Settings, deadline: float
) -> tuple[SplitSet, dict[str, Any]]:
    """The all-play split and the context entries its logit read: W12 on the pool's model's
    logit (the entries of ⌊n/2⌋ against ⌈n/2⌉, either way round), or, for a model without
    one, W12 by F1's sums (no entries)."""
    roster = asked.roster
    pool = roster.read(store)
    budget_s = max(0.0, deadline - time.perf_counter())
    if not pool_model(pool).has_split_logit():
        found = all_play_by_sums(
            roster.ratings(store),
            theta=pool.params.prediction_scale(),  # SynElo's Θ·T (F1t) for the P it shows
            parties=asked.parties,
            current=asked.current,
            prefer=body.prefer,
            budget_s=budget_s,
        )
        return found, {}
    model, _ = roster.states(store)
    keys, k = roster.keys, len(roster.keys) // 2
    context = _context_of(store, pool, model, [(keys[:k], keys[k:]), (keys[k:], keys[:k])])
    result = all_play_split(
        roster.ratings(store),
        lambda a, b: model.split_logit(a, b, context),
        lambda size_a, size_b: model.split_line(size_a, size_b, context),
        parties=asked.parties,
        current=asked.current,
        prefer=body.prefer,
        exact=len(keys) <= settings.n_max,
        budget_s=budget_s,
    )
    return result, context


def _context_of(
    store: Store,
    pool: Pool,
    model: Model[Any],
    teams: Sequence[tuple[Sequence[str], Sequence[str]]],
) -> dict[str, Any]:
    """The pool's context entries that rounds of these teams read."""
    wanted = {k for a, b in teams for k in model.context_keys(RoundFacts(tuple(a), tuple(b), "A"))}
    return store.read_context(pool, sorted(wanted))


def find_moves(pool: Pool, body: AutobalanceIn, store: Store) -> AutobalanceOut:
    """The moves that even out the teams of a round under way (the method the body names),
    a joiner placed first."""
    kind = pool.player_ids
    seen: dict[str, Loc] = {}
    team_a = normalize_ids(body.teams.A, kind, ("body", "teams", "A"), seen)
    team_b = normalize_ids(body.teams.B, kind, ("body", "teams", "B"), seen)
    joiner = (
        normalize_ids([body.joiner], kind, ("body", "joiner"), seen)
        if body.joiner is not None
        else ()
    )
    if body.alive and body.method != "f11":
        raise invalid(
            ("body", "alive"),
            "the dead-first rule is F11's; min_swaps does not read alive",
            value=body.alive,
        )
    if body.unassigned and body.method != "min_swaps":
        raise invalid(
            ("body", "unassigned"),
            "unassigned players are placed by min_swaps; use joiner with f11",
            value=body.unassigned,
        )
    new = normalize_ids(body.unassigned, kind, ("body", "unassigned"), seen)
    roster = Roster(pool, [*team_a, *team_b, *joiner, *new])
    if not roster.keys:
        raise invalid(("body", "teams"), "no players were given")
    where = "teams, joiner or unassigned"
    locked = set(roster.members(body.locked, ("body", "locked"), where=where))
    alive = set(roster.members(body.alive, ("body", "alive"), where=where))
    parties = roster.parties(body.parties, where)
    ratings = roster.ratings(store)
    a = list(range(len(team_a)))
    b = list(range(len(a), len(a) + len(team_b)))
    gap_before = abs(sum(ratings[i] for i in a) - sum(ratings[i] for i in b))
    placed: list[Move] = []
    if body.method == "min_swaps":
        extra = list(range(len(a) + len(b), len(roster.keys)))
        outcome = min_swaps(ratings, a, b, unassigned=extra, locked=locked, parties=parties)
    else:
        if joiner:
            j = len(a) + len(b)
            side = place_joiner(ratings, a, b, j, logit=_joiner_logit(roster, store, a, b, j))
            (a if side == "A" else b).append(j)
            placed.append(Move(j, "none", side))
        outcome = transfer_moves(
            ratings,
            a,
            b,
            locked=locked,
            parties=parties,
            alive=alive,
            theta=roster.read(store).params.theta,  # SynElo's Θ; other models: their own P
            odds=_transfer_odds(roster, store) if alive else None,
            headcount=_headcount(roster.read(store)),
        )
    return _answer(body.method, roster.keys, placed, gap_before, outcome)


def _headcount(pool: Pool) -> bool:
    """Whether the pool rates k + 1 against k by F1u (a SynElo pool's `uneven`)."""
    return pool.is_synelo and pool.params.uneven == "headcount"


def _transfer_odds(roster: Roster, store: Store) -> Odds | None:
    """The pool's model's P(A) of two teams (indices into the roster), for the dead-first
    rule; None for SynElo, whose F1 (F1u) the balancing computes from the sums itself."""
    pool = roster.read(store)
    if pool.is_synelo:
        return None
    model, states = roster.states(store)
    keys = roster.keys

    def p_a(a: Sequence[int], b: Sequence[int]) -> float:
        facts = RoundFacts(tuple(keys[i] for i in a), tuple(keys[i] for i in b), "A")
        return model.predict(states, facts, store.read_context(pool, model.context_keys(facts)))

    return p_a


def _joiner_logit(
    roster: Roster, store: Store, a: list[int], b: list[int], joiner: int
) -> Callable[[Sequence[float], Sequence[float]], float] | None:
    """An all-play model's split logit for placing an odd joiner (W12), with the context
    entries of either place, or a SynElo headcount pool's F1u logit (it predicts k + 1
    against k by it); None for other models (the joiner goes by sums)."""
    pool = roster.read(store)
    if pool.is_synelo:
        synelo = pool_model(pool)
        if not synelo.has_split_logit():
            return None
        return lambda x, y: synelo.split_logit(x, y, {})
    model, _ = roster.states(store)
    if model.split_mode != "all-play" or not model.has_split_logit():
        return None
    keys = roster.keys
    team_a, team_b = [keys[i] for i in a], [keys[i] for i in b]
    context = _context_of(
        store, pool, model, [([*team_a, keys[joiner]], team_b), (team_a, [*team_b, keys[joiner]])]
    )
    return lambda x, y: model.split_logit(x, y, context)


def _answer(
    method: str, keys: Sequence[str], placed: list[Move], gap_before: int, outcome: Rebalance
) -> AutobalanceOut:
    """The moves in order (a placed joiner first); gap_before is the teams as given."""
    moves = [
        MoveOut(steam_id=keys[m.player], **{"from": m.from_team}, to=m.to_team)
        for m in (*placed, *outcome.moves)
    ]
    return AutobalanceOut(
        method=method,
        moves=moves,
        gap_before=gap_before,
        gap_after=int(outcome.gap_after),
        sum_a=int(outcome.sum_a),
        sum_b=int(outcome.sum_b),
        size_a=outcome.size_a,
        size_b=outcome.size_b,
    )


def predict_win(pool: Pool, body: PredictIn, store: Store) -> PredictOut:
    """Team A's chance, the teams' strengths and the model's likely results for the teams of
    a round about to start, on the pool's ratings as they stand."""
    kind = pool.player_ids
    seen: dict[str, Loc] = {}
    team_a = tuple(normalize_ids(body.teams.A, kind, ("body", "teams", "A"), seen))
    team_b = tuple(normalize_ids(body.teams.B, kind, ("body", "teams", "B"), seen))
    extras = round_extras(body, kind, {"A": set(team_a), "B": set(team_b)})
    if body.map:
        extras["map"] = body.map
    facts = RoundFacts(team_a, team_b, "A", extras=extras)
    roster = Roster(pool, [*team_a, *team_b])
    results: list[ResultOut] | None = None
    pool = roster.read(store)
    if pool.is_synelo:
        ratings = dict(zip(roster.keys, roster.ratings(store), strict=True))
        strength_a = float(sum(ratings[k] for k in team_a))
        strength_b = float(sum(ratings[k] for k in team_b))
        p_a = roster_probability(
            strength_a,
            len(team_a),
            strength_b,
            len(team_b),
            pool.params.theta,
            pool.params.uneven == "headcount",
            pool.params.temperature,
        )
    else:
        model, states = roster.states(store)
        check_round(model, facts, rated=False)
        each = model.strengths([model.state_of(states, k) for k in (*team_a, *team_b)], facts)
        strength_a, strength_b = sum(each[: len(team_a)]), sum(each[len(team_a) :])
        context = store.read_context(pool, model.context_keys(facts))
        p_a = model.predict(states, facts, context)
        scores = model.results(states, facts, context)
        if scores is not None:
            results = [ResultOut(A=a, B=b, p=p) for a, b, p in scores]
    return PredictOut(p_a=p_a, strength_a=strength_a, strength_b=strength_b, results=results)
