"""The pool health page's parts: the charts it draws (and `line_chart`'s guide, worse side and
events), its SQL aggregates against the same figures worked out in Python from the rows (on
SQLite and PostgreSQL), the models' uncertainty fields, and the cache of its figures."""

from __future__ import annotations

import math
import random
import re
import time
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import orjson
import pytest
from sqlalchemy import Engine, false, insert, text, update

from synelo.config import Settings
from synelo.domain import Pool
from synelo.models import MODELS, create_model
from synelo.ratings import k_factor
from synelo.ratings.brier import block_error, block_rounds, brier_score, term_variance_bound
from synelo.ratings.synelo import round_score
from synelo.service.api import reports as web_health
from synelo.service.charts import Bin, Point, bar_chart, histogram, line_chart, reliability_chart
from synelo.store import health as store_health
from synelo.store.repository import Store
from synelo.store.tables import changes, players, pools, rounds

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def circles(svg: str) -> list[tuple[str, float, float, str]]:
    """(class, cx, cy, tooltip) of each circle of a chart."""
    found = re.findall(
        r'<circle class="([^"]+)" cx="([\d.]+)" cy="([\d.]+)" r="[\d.]+"><title>(.*?)</title>',
        svg,
    )
    return [(c, float(x), float(y), t) for c, x, y, t in found]


# --- charts -----------------------------------------------------------------------------------
def test_a_line_chart_without_the_new_options_draws_no_guide_or_event() -> None:
    svg = line_chart([Point(1000, "a"), Point(1010, "b", marked=True), Point(990, "c")], "r")
    assert [c for c, *_ in circles(svg)] == ["point", "point mark", "point"]
    assert 'class="guide"' not in svg and 'class="event"' not in svg and "worse" not in svg
    assert ">1010</text>" in svg and ">990</text>" in svg  # no decimals by default


def test_a_guide_marks_the_points_on_its_worse_side() -> None:
    values = [0.20, 0.30, 0.25, 0.26]
    svg = line_chart([Point(v, f"v{v}") for v in values], "brier", guide=0.25)
    drawn = circles(svg)
    assert [c for c, *_ in drawn] == ["point", "point worse", "point", "point worse"]
    (y,) = {float(v) for v in re.findall(r'<line class="guide"[^>]* y1="([\d.]+)"', svg)}
    assert drawn[2][2] == y  # the point at 0.25 sits on the guide, not on its worse side
    assert drawn[1][2] < y < drawn[0][2]  # higher values are drawn higher
    below = line_chart([Point(v, "") for v in values], "t", guide=0.25, worse="below")
    assert [c for c, *_ in circles(below)] == ["point worse", "point", "point", "point"]
    # a guide beyond every value widens the scale to show it
    high = line_chart([Point(0.1, ""), Point(0.2, "")], "t", guide=0.25)
    assert ">0.25</text>" in high and 'class="point worse"' not in high


def test_events_are_vertical_lines_between_points() -> None:
    points = [Point(v, str(v)) for v in (1, 2, 3, 4)]
    svg = line_chart(points, "t", events=[(1.5, "round <r1> voided"), (0, "start")])
    xs = [x for _, x, _, _ in circles(svg)]
    lines = re.findall(r'<line class="event" x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)"', svg)
    assert len(lines) == 2 and all(a == b for a, b in lines)
    assert float(lines[0][0]) == pytest.approx((xs[1] + xs[2]) / 2, abs=0.1)
    assert float(lines[1][0]) == pytest.approx(xs[0], abs=0.1)
    assert "<title>round &lt;r1&gt; voided</title>" in svg  # escaped, not markup


def test_a_bar_chart_draws_one_bar_per_label() -> None:
    svg = bar_chart([("2026-03-01", 4), ("2026-03-02", 0), ("2026-03-03", 2)], "per day")
    bars = re.findall(
        r'<rect class="([^"]+)" x="[\d.]+" y="[\d.]+" width="[\d.]+" '
        r'height="([\d.]+)"><title>(.*?)</title>',
        svg,
    )
    assert [c for c, _, _ in bars] == ["bar", "bar empty", "bar"]
    assert [t for _, _, t in bars] == ["2026-03-01: 4", "2026-03-02: 0", "2026-03-03: 2"]
    heights = [float(h) for _, h, _ in bars]
    assert heights[1] == 0 and heights[0] == pytest.approx(2 * heights[2], abs=0.1)
    assert bar_chart([], "none") == ""


def test_a_reliability_chart_places_each_bin_and_skips_empty_ones() -> None:
    bins = [
        Bin(0.0, 0.1, 0, math.nan, math.nan),
        Bin(0.4, 0.5, 40, 0.45, 0.45),  # calibrated: on the diagonal
        Bin(0.7, 0.8, 10, 0.75, 0.25),  # far below it
    ]
    svg = reliability_chart(bins, "calibration")
    drawn = circles(svg)
    assert [c for c, *_ in drawn] == ["bin", "bin"]
    assert "40 rounds" in drawn[0][3] and "10 rounds" in drawn[1][3]
    (x0, y0, x1, y1) = (
        float(v)
        for v in re.search(
            r'<line class="diagonal" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"', svg
        ).groups()  # type: ignore[union-attr]
    )
    _, cx, cy, _ = drawn[0]
    assert (cx - x0) / (x1 - x0) == pytest.approx(0.45, abs=0.01)
    assert (cy - y0) / (y1 - y0) == pytest.approx(0.45, abs=0.01)  # on the diagonal
    _, cx, cy, _ = drawn[1]
    assert (cy - y0) / (y1 - y0) == pytest.approx(0.25, abs=0.01)
    assert reliability_chart([Bin(0, 0.1, 0, math.nan, math.nan)], "empty") == ""


def test_a_histogram_writes_its_ranges_with_the_decimals_asked() -> None:
    svg = histogram([0.5, 1.25, 2.0], 3, "sigma", digits=2)
    assert "<title>0.50–1.00: 1</title>" in svg and "<title>1.50–2.00: 1</title>" in svg
    assert "<title>1–2: 2</title>" in histogram([1.0, 1.5, 3.0], 2, "k")  # as before


# --- models ---------------------------------------------------------------------------------
def test_each_models_uncertainty_names_one_of_its_fields() -> None:
    named = {name: cls.uncertainty for name, cls in MODELS.items()}
    assert (
        named["synelo"] == "k" and named["trueskill"] == "sigma" and named["whr"] == "uncertainty"
    )
    assert named["openskill-pl"] == "sigma" and named["elo"] is None
    for name, field in named.items():
        if field is not None:
            model = create_model(name)
            assert field in model.fields(model.new_state()), name


# --- the SQL aggregates ---------------------------------------------------------------------
def history(count: int, seed: int) -> list[dict[str, object]]:
    """Rounds 1…count in time order with every kind of result, P_A on the bins' edges among
    them, dated over 76 days but every fourth day (days without rounds), every ninth one
    voided."""
    rng = random.Random(seed)
    edges = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0, 0.0999999]
    played = [d for d in range(76) if d % 4 != 2]
    start = NOW.replace(hour=0, minute=0, second=0) - timedelta(days=75)
    return [
        {
            "seq": seq,
            "p_a": edges[seq % len(edges)] if seq % 5 == 0 else rng.random(),
            "winner": rng.choice(["A", "B", "draw", "A", "B"]),
            "created_at": start
            + timedelta(days=played[(seq - 1) * len(played) // count], seconds=seq),
            "voided": seq % 9 == 0,
        }
        for seq in range(1, count + 1)
    ]


def new_pool(store: Store, model: str = "synelo", **params: object) -> Pool:
    settings = Settings()
    base = settings.rating_params(settings.pool_theta(2, None))
    name = f"h{uuid.uuid4().hex[:12]}"
    return store.create_pool(name, 2, base, "steam", model, params or None)


def store_rounds(engine: Engine, pool: Pool, rows: list[dict[str, object]]) -> None:
    with engine.begin() as conn:
        conn.execute(
            insert(rounds),
            [
                {
                    **r,
                    "pool_id": pool.id,
                    "round_id": f"r{r['seq']}",
                    "server_id": "s",
                    "map": "m",
                    "sum_a": 1000,
                    "sum_b": 1000,
                    "content_hash": "x",
                    "result": "{}",
                }
                for r in rows
            ],
        )
        voided = sum(1 for r in rows if r["voided"])
        conn.execute(
            update(pools).where(pools.c.id == pool.id).values(rounds=len(rows), voided=voided)
        )


def test_the_aggregates_equal_the_figures_worked_out_from_the_rows(
    backend: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # blocks of a few rounds, so that this short history has many (a pool's are of 400 and
    # more: test_brier_blocks_are_whole_blocks_of_at_least_min_block_rounds)
    monkeypatch.setattr(store_health, "MIN_BLOCK", 5)
    store = Store(backend, lambda: NOW)
    pool = new_pool(store)
    rows = history(263, seed=5)
    store_rounds(backend, pool, rows)
    kept = [r for r in rows if not r["voided"]]
    found = store.health(pool)

    assert found.rounds == len(kept) == 263 - 29
    block = math.ceil(263 / store_health.BLOCKS)
    assert found.block == block == 6
    expected_blocks = []  # whole blocks, the newest ending with round 263: 6…11 … 258…263
    for first in range(263 % block + 1, 264, block):
        inside = [r for r in kept if first <= r["seq"] < first + block]  # type: ignore[operator]
        terms = [(r["p_a"] - round_score(r["winner"], "A")) ** 2 for r in inside]  # type: ignore[operator, arg-type]
        expected_blocks.append((first, first + block - 1, len(inside), brier_score(terms)))
    assert expected_blocks[0][0] == 6 and expected_blocks[-1][1] == 263
    assert [(b.first, b.last, b.rounds) for b in found.blocks] == [e[:3] for e in expected_blocks]
    for b, e in zip(found.blocks, expected_blocks, strict=True):
        assert b.brier == pytest.approx(e[3], rel=1e-12)

    assert len(found.bins) == store_health.BINS
    for i, b in enumerate(found.bins):
        inside = [
            r for r in kept if i / 10 <= r["p_a"] < (i + 1) / 10 or (i == 9 and r["p_a"] == 1.0)
        ]  # type: ignore[operator]
        assert (b.low, b.high, b.rounds) == (i / 10, (i + 1) / 10, len(inside)), i
        assert b.predicted == pytest.approx(sum(r["p_a"] for r in inside) / len(inside))  # type: ignore[misc]
        observed = sum(round_score(r["winner"], "A") for r in inside) / len(inside)  # type: ignore[arg-type]
        assert b.observed == pytest.approx(observed)
    assert sum(b.rounds for b in found.bins) == len(kept)

    newest = max(r["created_at"] for r in kept).date()  # type: ignore[union-attr, type-var]
    by_day: dict[object, int] = {}
    for r in kept:
        day = r["created_at"].date()  # type: ignore[union-attr]
        if (newest - day).days < store_health.DAYS:
            by_day[day] = by_day.get(day, 0) + 1
    assert len(found.days) == store_health.DAYS and found.days[-1][0] == newest
    assert dict(found.days) == {d: by_day.get(d, 0) for d, _ in found.days}
    assert sum(n for _, n in found.days) == sum(by_day.values())
    assert any(n == 0 for _, n in found.days)  # days without rounds are there, with 0


def test_brier_blocks_are_whole_blocks_of_at_least_min_block_rounds(backend: Engine) -> None:
    """Blocks of 400 rounds (`store_health.MIN_BLOCK`) counted back from the newest round;
    the oldest rounds, too few for a block, in none. (⌈rounds/50⌉ when that is more: in
    test_the_aggregates_equal_the_figures_worked_out_from_the_rows.)"""
    assert store_health.MIN_BLOCK == 400
    store = Store(backend, lambda: NOW)
    for count, block, firsts in (
        (399, 400, []),
        (1030, 400, [231, 631]),
    ):
        pool = new_pool(store)
        rows = [
            {"seq": i, "p_a": 0.6, "winner": "AB"[i % 3 == 0], "created_at": NOW, "voided": False}
            for i in range(1, count + 1)
        ]
        store_rounds(backend, pool, rows)
        found = store.health(pool)
        assert found.block == block and found.rounds == count
        assert [b.first for b in found.blocks] == firsts
        assert [b.last - b.first + 1 for b in found.blocks] == [block] * len(firsts)
        if firsts:
            assert found.blocks[-1].last == count
            inside = rows[firsts[0] - 1 : firsts[0] - 1 + block]
            expected = brier_score((0.6 - round_score(r["winner"], "A")) ** 2 for r in inside)  # type: ignore[arg-type]
            assert found.blocks[0].brier == pytest.approx(expected)


def test_a_calibrated_rounds_variance_is_within_the_bound() -> None:
    """term_variance_bound: for every calibrated prediction (a win, a draw and a loss with
    chances that make P their mean score), Var (P − O)² ≤ min(1/16, 0.25 − E (P − O)²),
    and 1/16 is reached."""
    highest = 0.0
    for i in range(101):
        for j in range(101 - i):
            win, draw = i / 100, j / 100
            p = win + draw / 2
            terms = [((p - 1) ** 2, win), ((p - 0.5) ** 2, draw), (p**2, 1 - win - draw)]
            mean = sum(t * w for t, w in terms)
            variance = sum(t * t * w for t, w in terms) - mean**2
            assert variance <= term_variance_bound(mean) + 1e-12, (win, draw)
            highest = max(highest, variance)
    assert highest == pytest.approx(1 / 16, abs=2e-4)
    assert block_rounds(0.025) == 400 and block_error(0.24, 400) == pytest.approx(0.005)


@pytest.mark.parametrize("spread", [0.2, 0.45])
def test_a_calibrated_pools_blocks_stay_within_the_band(spread: float) -> None:
    """Simulated calibrated pools (P uniform in 0.5 ± `spread`, each round won with
    chance P): 2,000 blocks of MIN_BLOCK rounds, at least 95 % within two of
    `block_error` of the pool's Brier, and as many within ±BAND, whatever the spread."""
    rng = np.random.default_rng(11)
    n = store_health.MIN_BLOCK
    p = rng.uniform(0.5 - spread, 0.5 + spread, size=(2000, n))
    o = (rng.random(size=p.shape) < p).astype(float)
    blocks = ((p - o) ** 2).mean(axis=1)
    pool = float(np.mean(p * (1 - p)))  # the pool's Brier: E (P − O)² = P(1 − P)
    near = np.abs(blocks - pool) <= 2 * block_error(pool, n)
    assert near.mean() >= 0.95
    assert (np.abs(blocks - pool) <= store_health.BAND).mean() >= 0.95
    if spread == 0.2:  # a pool at B ≈ 0.237: its blocks stay under the coin's 0.25
        assert (blocks > 0.25).mean() <= 0.025


def test_days_are_utc_days_whatever_the_sessions_time_zone(backend: Engine) -> None:
    store = Store(backend, lambda: NOW)
    pool = new_pool(store)
    late = NOW.replace(hour=23, minute=59, second=59)  # a day later east of UTC, earlier west
    rows = [
        {
            "seq": 1,
            "p_a": 0.5,
            "winner": "A",
            "created_at": late - timedelta(days=1),
            "voided": False,
        },
        {"seq": 2, "p_a": 0.5, "winner": "A", "created_at": late, "voided": False},
        {
            "seq": 3,
            "p_a": 0.5,
            "winner": "B",
            "created_at": late + timedelta(seconds=2),
            "voided": False,
        },
    ]
    store_rounds(backend, pool, rows)
    kept = (rounds.c.pool_id == pool.id, rounds.c.voided == false())
    with backend.connect() as conn:
        if conn.dialect.name != "sqlite":
            conn.execute(text("SET TIME ZONE 'Pacific/Auckland'"))
        days = store_health._days(conn, kept)
    first = late.date() - timedelta(days=1)
    assert days == [(first, 1), (first + timedelta(days=1), 1), (first + timedelta(days=2), 1)]


def test_the_uncertainty_is_each_active_players_k_or_models_field(backend: Engine) -> None:
    store = Store(backend, lambda: NOW)
    synelo = new_pool(store)
    params = synelo.params
    stale = NOW - timedelta(days=params.t_stale_days + 1)
    rows = [(1000, 1.0, NOW), (1300, 0.2, NOW - timedelta(days=2)), (900, 0.5, stale)]
    with backend.begin() as conn:
        conn.execute(
            insert(players),
            [
                {
                    "pool_id": synelo.id,
                    "player_key": str(i),
                    "rating": rating,
                    "rounds_played": 10,
                    "last_played": last,
                    "convergence": c,
                }
                for i, (rating, c, last) in enumerate(rows)
            ],
        )
    found = store.health(synelo).uncertainty
    assert sorted(found) == sorted(k_factor(c, r, params) for r, c, _ in rows[:2])

    trueskill = new_pool(store, "trueskill")
    model = create_model("trueskill")
    states = [model.new_state(), model.env.create_rating(mu=30, sigma=2.5)]  # type: ignore[attr-defined]
    with backend.begin() as conn:
        conn.execute(
            insert(players),
            [
                {
                    "pool_id": trueskill.id,
                    "player_key": str(i),
                    "rating": 0,
                    "rounds_played": 3,
                    "last_played": NOW,
                    "convergence": 1.0,
                    "state": orjson.dumps(model.encode(s)).decode(),
                }
                for i, s in enumerate(states)
            ],
        )
    new_sigma = model.new_state().sigma
    assert sorted(store.health(trueskill).uncertainty) == pytest.approx(sorted([2.5, new_sigma]))
    assert store.health(new_pool(store, "elo")).uncertainty == []


def test_the_version_moves_with_rounds_voids_and_the_admin_log(backend: Engine) -> None:
    store = Store(backend, lambda: NOW)
    pool = new_pool(store)
    before = store_health.health_version(store, pool)
    assert before == store_health.health_version(store, pool)
    store_rounds(backend, pool, history(3, seed=1))
    after_rounds = store_health.health_version(store, pool)
    assert after_rounds != before
    with backend.begin() as conn:
        conn.execute(
            insert(changes).values(
                pool_id=pool.id, seq=3, kind="tune", actor="t", created_at=NOW, value="{}"
            )
        )
    assert store_health.health_version(store, pool) != after_rounds
    (tune,) = store.health(pool).tunes
    assert tune.kind == "tune" and tune.seq == 3


# --- the figures' cache ---------------------------------------------------------------------
def test_figures_are_kept_while_the_version_holds_and_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(web_health.time, "monotonic", lambda: clock[0])
    cache = web_health.FiguresCache()
    pool = Pool(1, "p", 2, "steam", Settings().rating_params(400), 0, 0.0, NOW)
    made: list[int] = []

    def make() -> dict[str, object]:
        made.append(1)
        return {"n": len(made)}

    assert cache.get(pool, (1, 0), make) == ({"n": 1}, False)
    assert cache.get(pool, (1, 0), make) == ({"n": 1}, False)  # kept
    assert cache.get(pool, (1, 1), make) == ({"n": 2}, False)  # changed: made again
    clock[0] += web_health.FRESH_S + 1
    assert cache.get(pool, (1, 1), make) == ({"n": 3}, False)  # too old: made again
    assert len(made) == 3


class _Slow:
    """A figures computation that counts its calls and takes `seconds`."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.calls = seconds, 0

    def __call__(self) -> dict[str, object]:
        time.sleep(self.seconds)
        self.calls += 1
        return {"made": self.calls}


def _version(
    rounds: int, generation: int = 0, voided: int = 0, change: int = -1
) -> tuple[object, ...]:
    return ("p", "created", 7, generation, rounds, voided, change)


def test_slow_figures_are_answered_at_once_and_brought_up_to_date_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(web_health, "REFRESH_S", 0.0)
    pool = Pool(7, "p", 2, "steam", Settings().rating_params(400), 0, 0.0, NOW)
    cache = web_health.FiguresCache()
    make = _Slow(web_health.SLOW_S + 0.03)
    assert cache.get(pool, _version(10), make) == ({"made": 1}, False)
    assert cache.get(pool, _version(10), make) == ({"made": 1}, False)  # kept
    assert cache.get(pool, _version(11), make) == ({"made": 1}, True)  # behind, at once
    assert cache.get(pool, _version(12), make) == ({"made": 1}, True)  # one thread at a time
    deadline = time.monotonic() + 5
    while make.calls < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.01)
    assert make.calls == 2
    assert cache.get(pool, _version(11), make) == ({"made": 2}, False)  # the thread's
    # anything but new rounds (a re-rate, a void, an admin change) is computed in the request
    for changed in (_version(11, generation=1), _version(11, voided=1), _version(11, change=3)):
        made = make.calls + 1
        assert cache.get(pool, changed, make) == ({"made": made}, False)


def test_fast_figures_are_always_computed_anew() -> None:
    pool = Pool(8, "q", 2, "steam", Settings().rating_params(400), 0, 0.0, NOW)
    cache = web_health.FiguresCache()
    make = _Slow(0.0)
    assert cache.get(pool, _version(10), make) == ({"made": 1}, False)
    assert cache.get(pool, _version(11), make) == ({"made": 2}, False)


def test_slow_figures_are_computed_again_at_most_every_refresh() -> None:
    pool = Pool(9, "r", 2, "steam", Settings().rating_params(400), 0, 0.0, NOW)
    cache = web_health.FiguresCache()
    make = _Slow(web_health.SLOW_S + 0.01)
    assert cache.get(pool, _version(10), make) == ({"made": 1}, False)
    for played in range(11, 20):  # rounds keep coming: the figures stay, marked behind
        assert cache.get(pool, _version(played), make) == ({"made": 1}, True)
    time.sleep(0.1)
    assert make.calls == 1
