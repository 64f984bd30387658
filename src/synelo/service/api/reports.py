"""A pool's health figures, which the health page and `GET /v1/public/pools/{pool}/health`
both show: whether the ratings work. F6 over time against a coin's 0.25, the reliability
diagram, the spread of the model's uncertainty (SynElo's K), the Θ the rounds suggest with the
auto-tunes, and the rounds of each day; voided rounds in none of them. The figures come with
the page's charts, drawn once with them.

The figures aggregate every round of the pool, which costs the database a scan of them
(and `Store.quality` a fit over up to 100,000): about a second at 100,000 rounds. An app
therefore keeps each pool's figures, computed once for all readers, while the pool is
unchanged (no round, void, re-rate or admin change since) and for at most FRESH_S. When only
new rounds came since, and the figures took longer than SLOW_S to compute, the page answers
with the figures it has, marked with the round they are as of, while a thread brings them up
to date, at most every REFRESH_S: a pool that rates a round every few seconds would otherwise
make most views wait a second, or keep a core busy. A small pool's figures are always
computed anew.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from synelo.domain import Change, Pool, PoolQuality
from synelo.models import MODELS
from synelo.ratings.brier import BRIER_TARGET
from synelo.service.api.views import change_steps
from synelo.service.charts import (
    Bin,
    Point,
    bar_chart,
    histogram,
    line_chart,
    reliability_chart,
    ticks_along,
)
from synelo.store.health import BAND, PoolHealth, ServerHealth, health_version
from synelo.store.repository import Store

log = logging.getLogger("synelo.web")
FRESH_S = 60.0  # the longest a pool's figures are kept (players turn stale meanwhile)
SLOW_S = 0.05  # figures slower than this to compute are brought up to date in the background
# ... at most this often: on a pool in play (a round every few seconds), computing them after
# every round would keep a core busy and slow every other request of the worker
REFRESH_S = 15.0
KEPT_POOLS = 32  # pools whose figures an app keeps, the least recently read dropped first
SPREAD_BARS = 20


@dataclass(frozen=True, slots=True)
class Figures:
    """A pool's health page as computed, before the request's own parts (the admin
    header) are added."""

    version: tuple[Any, ...]
    made: float  # time.monotonic() when computed
    took: float  # seconds the computation took
    context: dict[str, Any]


class FiguresCache:
    """Each pool's figures while its version is unchanged and for at most FRESH_S; one
    computation at a time per pool, the other readers waiting for it."""

    def __init__(self) -> None:
        self._kept: OrderedDict[int, Figures] = OrderedDict()
        self._locks: dict[int, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(
        self, pool: Pool, version: tuple[Any, ...], make: Callable[[], dict[str, Any]]
    ) -> tuple[dict[str, Any], bool]:
        """The pool's figures, and whether they are behind the pool's newest rounds (and
        being brought up to date)."""
        with self._lock:
            building = self._locks.setdefault(pool.id, threading.Lock())
            found = self._kept.get(pool.id)
        if found is not None and found.took >= SLOW_S and _only_new_rounds(found.version, version):
            if time.monotonic() - found.made < REFRESH_S:
                return found.context, True  # new enough: no thread yet
            if building.acquire(blocking=False):  # else a thread is on it already
                threading.Thread(
                    target=self._build, args=(pool, version, make, building), daemon=True
                ).start()
            return found.context, True
        with building:
            with self._lock:
                found = self._kept.get(pool.id)
            if (
                found is not None
                and found.version == version
                and time.monotonic() - found.made < FRESH_S
            ):
                return found.context, False
            return self._make(pool, version, make), False

    def _build(
        self,
        pool: Pool,
        version: tuple[Any, ...],
        make: Callable[[], dict[str, Any]],
        building: threading.Lock,
    ) -> None:
        """Bring a pool's figures up to date, on a thread of its own (holding `building`)."""
        try:
            self._make(pool, version, make)
        except Exception:  # the next view tries again, in its request
            log.exception(
                "the health figures of pool %s could not be brought up to date", pool.name
            )
        finally:
            building.release()

    def _make(
        self, pool: Pool, version: tuple[Any, ...], make: Callable[[], dict[str, Any]]
    ) -> dict[str, Any]:
        began = time.monotonic()
        context = make()
        now = time.monotonic()
        with self._lock:
            self._kept[pool.id] = Figures(version, now, now - began, context)
            self._kept.move_to_end(pool.id)
            while len(self._kept) > KEPT_POOLS:
                self._kept.popitem(last=False)
        return context


def _only_new_rounds(kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    """Whether the pool changed since `kept` by new rounds alone (its version's rounds,
    the next to last entry, grew; nothing else moved)."""
    return (
        len(kept) == len(now)
        and kept[:-3] == now[:-3]
        and kept[-3] < now[-3]
        and kept[-2:] == now[-2:]
    )


def _cache(request: Request, name: str = "health_figures") -> FiguresCache:
    """The app's cache of figures of that name (made on the first page that reads it)."""
    state = request.app.state
    cache: FiguresCache | None = getattr(state, name, None)
    if cache is None:
        cache = FiguresCache()
        setattr(state, name, cache)
    return cache


async def _version(store: Store, found: Pool) -> tuple[Any, ...]:
    """What a pool's figures depend on (`health_version`), with the pool's name and birth
    (a pool deleted and made again under its name is another pool)."""
    return (found.name, found.created_at, *await run_in_threadpool(health_version, store, found))


async def pool_figures(request: Request, found: Pool) -> tuple[dict[str, Any], bool]:
    """The pool's figures (see FiguresCache) and whether newer rounds are being added;
    UnknownPool if the pool was deleted meanwhile."""
    store: Store = request.app.state.store
    recent: int = request.app.state.settings.brier_recent
    version = await _version(store, found)

    def make() -> dict[str, Any]:
        _, quality = store.quality(found.name, recent)
        return figures(store.health(found), quality)

    return await run_in_threadpool(_cache(request).get, found, version, make)


async def pool_servers(request: Request, found: Pool) -> tuple[dict[str, Any], bool]:
    """Each server's figures (`store.server_health`), kept as the health figures are (a
    cache of their own: the health page does not pay for them), and whether newer rounds
    are being added; UnknownPool if the pool was deleted meanwhile."""
    store: Store = request.app.state.store
    version = await _version(store, found)

    def make() -> dict[str, Any]:
        pool = store.get_pool(found.name)
        return {"pool": pool, "servers": [_server(s) for s in store.server_health(pool)]}

    return await run_in_threadpool(_cache(request, "server_figures").get, found, version, make)


def figures(health: PoolHealth, quality: PoolQuality) -> dict[str, Any]:
    """The page's context: its charts, tables and sentences' figures."""
    pool = health.pool
    model = MODELS[pool.model]
    return {
        "pool": pool,
        "target": BRIER_TARGET,
        "rounds": health.rounds,
        "quality": quality,
        "block": health.block,
        "band": BAND,
        "blocks": health.blocks,
        "worse_blocks": sum(1 for b in health.blocks if b.brier > BRIER_TARGET),
        "brier_chart": line_chart(
            [
                Point(b.brier, f"rounds {b.first}–{b.last} ({b.rounds} rated): Brier {b.brier:.4f}")
                for b in health.blocks
            ],
            f"Brier score by blocks of {health.block} rounds, against {BRIER_TARGET}",
            guide=BRIER_TARGET,
            worse="above",
            x_ticks=ticks_along([b.last for b in health.blocks], whole=True),
            x_label="rounds rated (a point at its block's last)",
            y_label="Brier score",
        ),
        "bins": health.bins,
        "reliability_chart": reliability_chart(
            [Bin(b.low, b.high, b.rounds, b.predicted, b.observed) for b in health.bins],
            "predicted chance of team A against how often team A won",
        ),
        "spread_name": "K" if pool.is_synelo else model.uncertainty,
        "spread": _spread(health.uncertainty),
        "spread_key": "k" if pool.is_synelo else model.uncertainty,
        "spread_players": len(health.uncertainty),
        "spread_chart": histogram(
            health.uncertainty,
            SPREAD_BARS,
            f"the {len(health.uncertainty)} active players' "
            f"{'K' if pool.is_synelo else model.uncertainty}",
            digits=_digits(health.uncertainty),
            x_label=f"{'K' if pool.is_synelo else model.uncertainty}",
            y_label="players",
        ),
        "theta": _theta(pool, quality),
        "tunes": [_tune(c) for c in health.tunes],
        "last_change": None if health.last_change is None else _tune(health.last_change),
        "last_params_change": None
        if health.last_params_change is None
        else _params_change(health.last_params_change),
        "days": health.days,
        "day_rounds": sum(n for _, n in health.days),
        "days_chart": bar_chart(
            [(d.isoformat(), n) for d, n in health.days], "rounds played each day (UTC)"
        ),
    }


def _server(server: ServerHealth) -> dict[str, Any]:
    """A server's figures as its row shows them, and whether its Brier lies above a coin's
    by more than two standard errors: worse than a coin beyond what chance explains."""
    worse = (
        server.brier is not None
        and server.error is not None
        and server.brier - 2 * server.error > BRIER_TARGET
    )
    return {"server": server, "worse": worse}


def _spread(values: list[float]) -> dict[str, float] | None:
    """The lowest, median and highest of the players' uncertainty figure."""
    if not values:
        return None
    return {"low": min(values), "median": statistics.median(values), "high": max(values)}


def _digits(values: list[float]) -> int:
    """Decimals enough to tell a histogram's ranges apart (σ of a few units, K of tens)."""
    span = max(values, default=0.0) - min(values, default=0.0)
    return 0 if span >= 100 else 1 if span >= 10 else 2


def _theta(pool: Pool, quality: PoolQuality) -> dict[str, Any]:
    """F1's Θ, F1t's T and the scale the pool's newest rounds suggest for the shown P (Θ·T
    on even rosters), as `GET …/quality` reports it."""
    fit = quality.theta_fit
    return {
        "current": pool.params.theta if pool.is_synelo else None,
        "temperature": pool.params.temperature if pool.is_synelo else None,
        "status": fit.status if pool.is_synelo else "n/a",
        "suggested": fit.theta,
        "low": fit.theta_low,
        "high": fit.theta_high,
        "p_value": fit.p_value_vs_coin,
        "rounds": fit.rounds,
    }


def _tune(change: Change) -> dict[str, Any]:
    """An auto-tune of the pool's log: when, at which round, what it fitted (each parameter
    before → fitted), the held-out log losses, the paired gain with its standard error and
    the rule it was held to (`rerate.autotune`'s A2), and its verdict."""
    value = dict(change.value or {})
    fitted = value.get("fitted") or {}
    before = value.get("before") or {}
    return {
        "at": change.created_at,
        "seq": change.seq,
        "adopted": bool(value.get("adopted")),
        "fitted": ", ".join(f"{k} = {v:.4g}" for k, v in sorted(fitted.items())),
        "moves": ", ".join(
            f"{k} {before[k]:.4g} → {v:.4g}" if k in before else f"{k} → {v:.4g}"
            for k, v in sorted(fitted.items())
        ),
        "current": value.get("heldout_log_loss_current"),
        "fitted_loss": value.get("heldout_log_loss_fitted"),
        "heldout_rounds": value.get("heldout_rounds"),
        "gain": value.get("gain"),
        "se": value.get("standard_error"),
        "margin": value.get("margin"),
        "noise": value.get("noise"),
        "error": value.get("error"),
    }


def _params_change(change: Change) -> dict[str, Any]:
    """A re-rate of the pool's log that changed its model or parameters (a PATCH, a
    switch, an adopted auto-tune): who, when, at which round, each setting from its old
    value to its new one (an entry logged before it kept them: the model it set), and
    the auto-tuning it set, if it set one ("off", "fitting theta")."""
    value = dict(change.value or {})
    if change.kind == "tune":
        moves = _tune(change)["moves"]
    elif "changed" in value:
        moves = change_steps(value["changed"])
    else:
        moves = f"model {value.get('model')}, its parameters set"
    autotune = None
    if "autotune" in value:  # a re-rate that set the auto-tuning too (a switch may)
        setting = value["autotune"]
        autotune = "off" if setting is None else "fitting " + ", ".join(setting["fit"])
    return {
        "at": change.created_at,
        "seq": change.seq,
        "kind": "auto-tune" if change.kind == "tune" else "PATCH",
        "actor": change.actor,
        "reason": change.reason,
        "moves": moves or "nothing",
        "autotune": autotune,
    }
