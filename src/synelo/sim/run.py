"""`synelo simulate`: set up the service (in-process or `--url`), the faults, the players and
the servers, play the rounds, then measure what the service did (over HTTP) and write
summary.json and the plots."""

from __future__ import annotations

import json
import logging
import math
import random
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from synelo.client import SyneloClient
from synelo.evaluation.stats import spearman
from synelo.game import GameSettings
from synelo.ratings import seed_theta
from synelo.ratings.team_map import team_map
from synelo.sim.faults import FaultProxy, Verdict
from synelo.sim.metrics import brier_terms, rounds_to_within
from synelo.sim.plots import write_plots
from synelo.sim.service import LocalService
from synelo.sim.world import RoundRecord, SimPlayer, SimServer, World, steam_id


@dataclass
class SimConfig:
    players: int = 200
    servers: int = 4
    team_size: int = 12
    # The world's own logistic scale for true skills (None: the design's 400·floor((k+1)/2) for
    # the team size k, 2400 for 12v12). It never follows the pool's Θ: a smaller pool Θ must
    # not make the simulated game less random.
    world_theta: float | None = None
    pool_theta: float | None = None  # the new pool's Θ (None: the service's default)
    rounds: int = 20_000
    seed: int = 1
    out: Path = Path("sim-out")
    url: str | None = None
    token: str | None = None
    mode: str = "koth"
    skill_mean: float = 1000.0
    skill_sd: float = 300.0
    skill_dist: str = "normal"  # normal, or uniform with the same mean and sd
    churn: float = 0.02  # chance a player leaves during a round
    autobalance: str = "f11"
    fail_first: float = 0.0  # share of round reports whose first attempt fails (503)
    lose_responses: float = 0.0  # share of round-report answers lost after the service applied
    outages: list[tuple[int, int]] = field(default_factory=list)  # (from round, rounds)
    restarts: list[int] = field(default_factory=list)  # rounds before which it restarts
    thrower: bool = False  # throwers: from round R/2 each loses `throw_rounds` of their rounds
    smurf: bool = False  # smurfs: new accounts R_0 + `smurf_above_r0` strong, from round R/4
    throwers: int = 1  # how many, when `thrower`
    smurfs: int = 1  # how many, when `smurf`
    throw_rounds: int = 200
    smurf_above_r0: float = 600.0
    pool_params: dict[str, float | str] = field(default_factory=dict)  # the pool's overrides
    autotune: bool = True  # the new pool's auto-tuning: the service's default, else off
    snapshots: int = 40  # rating snapshots (Spearman over time)
    recent: int = 2000  # rounds in brier_recent
    progress: bool = True


def world_theta(config: SimConfig) -> float:
    """The world's scale: the configured one, else the design's rule for the team size."""
    return config.world_theta if config.world_theta is not None else seed_theta(config.team_size)


class Faults:
    """The injected faults: the proxy's verdict per request, outages and restarts by round."""

    def __init__(self, config: SimConfig, rng: random.Random) -> None:
        self.config, self.rng = config, rng
        self.seen: set[str] = set()
        self.round = 0

    def decide(self, method: str, path: str, body: bytes) -> Verdict:
        if method != "POST" or not path.endswith("/rounds"):
            return "pass"
        round_id = json.loads(body)["round_id"]
        first = round_id not in self.seen
        self.seen.add(round_id)
        if first and self.rng.random() < self.config.fail_first:
            return "fail"
        if self.rng.random() < self.config.lose_responses:
            return "drop"
        return "pass"

    def down(self, round_no: int) -> bool:
        return any(start <= round_no < start + length for start, length in self.config.outages)


def make_players(
    config: SimConfig, rng: np.random.Generator
) -> tuple[list[SimPlayer], dict[str, list[str]]]:
    if config.skill_dist == "uniform":
        half = config.skill_sd * 3**0.5
        drawn = rng.uniform(config.skill_mean - half, config.skill_mean + half, config.players)
    elif config.skill_dist == "normal":
        drawn = rng.normal(config.skill_mean, config.skill_sd, config.players)
    else:
        raise ValueError(f"unknown skill distribution {config.skill_dist!r} (normal, uniform)")
    skills = np.maximum(drawn, 100.0)
    players = [SimPlayer(steam_id(i + 1), float(s)) for i, s in enumerate(skills)]
    plan: dict[str, list[str]] = {"thrower": [], "smurf": []}
    if config.thrower:  # the players nearest mean + 1 sd: their rating has room to fall
        target = config.skill_mean + config.skill_sd
        for thrower in sorted(players, key=lambda p: abs(p.skill - target))[: config.throwers]:
            thrower.role, thrower.always_on = "thrower", True
            thrower.throws_left = config.throw_rounds
            plan["thrower"].append(thrower.id)
    if config.smurf:
        r0 = float(config.pool_params.get("r0", 1000))
        for i in range(config.smurfs):
            smurf = SimPlayer(
                steam_id(config.players + 1 + i),
                r0 + config.smurf_above_r0,
                "smurf",
                online_from=config.rounds // 4,
                always_on=True,
            )
            players.append(smurf)
            plan["smurf"].append(smurf.id)
    return players, plan


def simulate(config: SimConfig, console: Console | None = None) -> dict[str, Any]:  # noqa: C901
    console = console or Console()
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(config.seed)
    started = time.monotonic()
    service: LocalService | None = None
    if config.url is None:
        admin_token = secrets.token_urlsafe(24)
        service = LocalService(out / "service", admin_token, secrets.token_urlsafe(24))
        service.start()
        url = service.url
        # The game servers report with the admin token, as with --url: a simulation runs
        # faster than real time (~110 rounds/s), past a server token's default limit of 50
        # rounds/s, and admin tokens are unlimited by default (the service runs at its
        # defaults, rate limits included).
        server_token = admin_token
    else:
        if config.restarts:
            raise ValueError("--restart-at needs the in-process service (no --url)")
        if not config.token:
            raise ValueError("--url needs an admin token (--token or SYNELO_TOKEN)")
        url, admin_token = config.url, config.token
        server_token = config.token
    client_log = logging.getLogger("synelo.client")  # buffered/dropped reports: to a file
    handler = logging.FileHandler(out / "client.log", mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    client_log.addHandler(handler)
    client_log.propagate = False
    faults = Faults(config, random.Random(config.seed))
    proxy = None
    if config.fail_first or config.lose_responses or config.outages:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        proxy = FaultProxy((host, int(port)), faults.decide)
    clients: list[SyneloClient] = []
    try:
        admin = SyneloClient(url, admin_token, timeout=60)
        clients.append(admin)
        pool = f"sim-{config.seed}-{secrets.token_hex(4)}"
        admin.create_pool(
            pool,
            config.team_size,
            theta=config.pool_theta,
            params=config.pool_params or None,
            autotune="default" if config.autotune else "off",
        )
        admin.pool = pool
        players, plan = make_players(config, rng)
        settings = GameSettings(autobalance=config.autobalance)  # type: ignore[arg-type]
        servers = []
        for i in range(config.servers):
            client = SyneloClient(proxy.url if proxy else url, server_token, pool, timeout=2.0)
            clients.append(client)
            servers.append(SimServer(i + 1, config.mode, config.team_size, client, settings))
        world = World(
            players=players,
            servers=servers,
            theta=world_theta(config),
            rng=rng,
            churn=config.churn,
            throw_from=config.rounds // 2,
        )
        every = max(1, config.rounds // max(config.snapshots, 1))
        snapshots: list[dict[str, Any]] = []
        tunes: list[int] = []

        def before_round(r: int) -> None:
            if proxy is not None:
                proxy.down = faults.down(r)
            if service is not None and r in config.restarts:
                service.restart()
            if service is not None and config.autotune:  # deterministic: by rounds
                tunes.extend(service.tune_due({pool}))

        with Progress(
            TextColumn("[bold]simulating"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeRemainingColumn(),
            console=console,
            disable=not config.progress,
        ) as bar:
            task = bar.add_task("rounds", total=config.rounds, info="")
            for r in range(1, config.rounds + 1):
                world.step(before_round)
                if r % every == 0 or r == config.rounds:
                    snap = snapshot(admin, players, r)
                    snapshots.append(snap)
                    bar.update(task, info=f"ρ≥100 {_fmt(snap['spearman_100'])}")
                bar.advance(task)
        if proxy is not None:
            proxy.down = False
        for server in servers:  # the round end after the last: retry what is still buffered
            for result in server.reporter.flush(force=True):
                world.record(server, result)
        summary, data = measure(config, admin, world, players, plan, snapshots)
        summary["seconds"] = round(time.monotonic() - started, 1)
        summary["faults"] = {
            "proxy": dict(proxy.counts) if proxy else None,
            "restarts": service.restarts if service else 0,
        }
        summary["plots"] = write_plots(out, data)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        print_summary(console, summary)
        return summary
    finally:
        client_log.removeHandler(handler)
        client_log.propagate = True
        handler.close()
        for client in clients:
            client.close()
        if proxy is not None:
            proxy.close()
        if service is not None:
            service.stop()


def snapshot(admin: SyneloClient, players: list[SimPlayer], r: int) -> dict[str, Any]:
    """Spearman's ρ of rating with true skill now (players with ≥ 100 and ≥ 10 rounds)."""
    skill = {p.id: p.skill for p in players}
    looked = admin.lookup([p.id for p in players])
    pairs = [(skill[x.steam_id], x.rating, x.rounds_played) for x in looked]
    ks = [x.k for x in looked if x.rounds_played >= 100 and x.k is not None]
    veterans_k = [x.k for x in looked if x.rounds_played >= 500 and x.k is not None]
    rho = {}
    for least in (100, 10):
        chosen = [(s, r) for s, r, n in pairs if n >= least]
        rho[least] = spearman([s for s, _ in chosen], [r for _, r in chosen])
    return {
        "round": r,
        "spearman_100": rho[100],
        "spearman_all": rho[10],
        "players_100": sum(1 for *_, n in pairs if n >= 100),
        "mean_k_100": float(np.mean(ks)) if ks else None,
        "median_k_500": float(np.median(veterans_k)) if veterans_k else None,
    }


def measure(
    config: SimConfig,
    admin: SyneloClient,
    world: World,
    players: list[SimPlayer],
    plan: dict[str, list[str]],
    snapshots: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Everything summary.json says, read back from the service over HTTP."""
    obs = world.obs
    looked = {x.steam_id: x for x in admin.lookup([p.id for p in players])}
    with (Path(config.out) / "players.csv").open("w") as f:
        f.write("steam_id,role,skill,rating,rounds_played,k\n")
        for p in players:
            x = looked[p.id]
            f.write(f"{p.id},{p.role},{p.skill:.1f},{x.rating},{x.rounds_played},{x.k:.2f}\n")
    rated = [(p.skill, looked[p.id].rating) for p in players if looked[p.id].rounds_played >= 100]
    if len(rated) >= 3:
        sk, ra = np.array(rated).T
        slope, intercept = np.polyfit(sk, ra, 1)
        scale = {
            "rating_sd": float(ra.std()),
            "skill_sd": float(sk.std()),
            "rating_on_skill_slope": float(slope),
            "median_abs_rating_minus_skill": float(np.median(np.abs(ra - sk))),
            "share_within_100_of_skill": float(np.mean(np.abs(ra - sk) <= 100)),
        }
    else:
        scale = {}
    rows, keys = 0, set()
    for p in players:
        for entry in admin.full_history(p.id):
            if entry.kind == "round":
                rows += 1
                keys.add((p.id, entry.round_id))
    reported = list(obs.reports.values())
    by_seq = sorted(
        ((r.result, r) for r in reported if r.result is not None), key=lambda pair: pair[0].seq
    )
    answered = [r for _, r in by_seq]
    p_a = [result.p_a for result, _ in by_seq]
    outcome = [1.0 if r.winner == "A" else 0.0 if r.winner == "B" else 0.5 for r in answered]
    terms = brier_terms(p_a, outcome)
    recent = terms[-config.recent :]
    true_terms = brier_terms([r.true_p for r in answered], outcome)[-config.recent :]
    final = snapshots[-1] if snapshots else {}
    stats = [s.reporter.stats for s in world.servers]
    summary: dict[str, Any] = {
        "rounds": len(reported),
        "rounds_played": obs.rounds_played,
        "rounds_applied": admin.pool_info().rounds,
        "journal_rows": rows,
        "expected_journal_rows": sum(r.participants for r in reported),
        "duplicate_rows": rows - len(keys),
        "spearman": final.get("spearman_100"),
        "spearman_players": final.get("players_100"),
        "mean_k": final.get("mean_k_100"),
        "median_k_500": final.get("median_k_500"),
        **scale,
        "brier_recent": float(recent.mean()) if len(recent) else None,
        "brier_recent_rounds": int(len(recent)),
        "brier_all": float(terms.mean()) if len(terms) else None,
        "brier_truth_recent": float(true_terms.mean()) if len(true_terms) else None,
        "mean_abs_p_gap": float(np.mean(np.abs(np.asarray(p_a) - 0.5))) if p_a else None,
        "scrambles": sum(1 for *_, ok in obs.scrambles if ok),
        "scrambles_pending": sum(1 for *_, ok in obs.scrambles if not ok),
        "autobalance_moves": obs.moves,
        "reports_sent_first_time": sum(s.sent for s in stats),
        "reports_buffered": sum(s.buffered for s in stats),
        "reports_retried": sum(s.retried for s in stats),
        "retries_already_applied": sum(s.already_applied for s in stats),
        "reports_dropped": sum(s.dropped for s in stats),
        "reports_unanswered": len(reported) - len(answered),
        "split_refresh_failures": sum(s.cache.failures for s in world.servers),
        "config": {
            k: (str(v) if isinstance(v, Path) else v)
            for k, v in asdict(config).items()
            if k not in ("token", "progress")
        },
        "pool_theta": admin.pool_info().theta,  # at the end (an adopted auto-tune's)
        # F1t's T at the end: what a new SynElo pool's auto-tune fits (None: another model)
        "pool_temperature": admin.pool_info().params.get("temperature"),
        "world_theta": world.theta,
    }
    adversaries = [
        adversary(world, role, pid, config.throw_rounds)
        for role in ("thrower", "smurf")
        for pid in plan[role]
    ]
    for role, figure in (
        ("smurf", "rounds_to_settle"),
        ("thrower", "rounds_after_stop_to_within_100_of_before"),
    ):
        values = [a.get(figure) for a in adversaries if a["role"] == role]
        summary[f"{role}_{figure}_median"] = _median_or_never(values) if values else None
    summary["adversaries"] = [
        {k: v for k, v in a.items() if k != "trajectory"} for a in adversaries
    ]
    summary.update(map_bound(config, world, players, looked, answered))
    log = admin.request("GET", f"/v1/pools/{admin.pool}/changes").json()["changes"]
    summary["autotunes"] = [  # each auto-tune's verdict (`rerate.autotune.Fit`)
        {"after_round": c["seq"], **{k: v for k, v in (c["value"] or {}).items() if k != "params"}}
        for c in log
        if c["kind"] == "tune"
    ]
    summary["spearman_over_time"] = snapshots
    data = {
        "brier_terms": terms,
        "snapshots": [
            s for s in snapshots if s["spearman_100"] is not None and s["spearman_all"] is not None
        ],
        "p_a": p_a,
        "true_p": [r.true_p for r in answered],
        "scrambles": obs.scrambles,
        "rounds_played": obs.rounds_played,
        "adversaries": adversaries,
    }
    return summary, data


MAP_REFITS = 20  # prequential MAP fits over the recent rounds (each predicts 1/20 of them)


def map_bound(
    config: SimConfig,
    world: World,
    players: list[SimPlayer],
    looked: dict[str, Any],
    answered: list[RoundRecord],
) -> dict[str, Any]:
    """The information bound: the whole-history MAP of the answered rounds (M1–M3 of
    `synelo.ratings.team_map`, with the world's link and scale and a prior of the configured
    skill mean and sd), its Spearman's ρ with the hidden skills and the pool's ρ over it,
    both over the players the pool rated in ≥ 100 rounds; and the prequential MAP's Brier
    over the recent rounds (in MAP_REFITS blocks, each round predicted from the MAP of the
    rounds before its block only: what a rating that knew the world's model could score
    online)."""
    index = {p.id: i for i, p in enumerate(players)}
    rounds = [
        (
            [index[pid] for pid in r.teams[0]],
            [index[pid] for pid in r.teams[1]],
            1.0 if r.winner == "A" else 0.0 if r.winner == "B" else 0.5,
        )
        for r in answered
        if r.teams[0] and r.teams[1]
    ]

    def fit(upto: int) -> np.ndarray:
        return team_map(
            rounds[:upto], len(players), world.theta, config.skill_mean, config.skill_sd
        )

    fitted = fit(len(rounds))
    chosen = [p for p in players if looked[p.id].rounds_played >= 100]
    skills = [p.skill for p in chosen]
    bound = spearman(skills, [float(fitted[index[p.id]]) for p in chosen])
    pool = spearman(skills, [looked[p.id].rating for p in chosen])
    first = max(len(rounds) - config.recent, 0)
    edges = np.linspace(first, len(rounds), MAP_REFITS + 1).astype(int)
    p_a: list[float] = []
    for start, stop in zip(edges[:-1], edges[1:], strict=True):
        if stop > start:
            s = fit(int(start))
            p_a += [
                1.0 / (1.0 + math.exp(-(s[a].sum() - s[b].sum()) / world.theta))
                for a, b, _ in rounds[start:stop]
            ]
    terms = brier_terms(p_a, [o for *_, o in rounds[first:]])
    return {
        "map_spearman": bound,
        "map_rounds": len(rounds),
        "pool_spearman_same_players": pool,
        "spearman_over_map": pool / bound if pool is not None and bound else None,
        "map_brier_recent": float(terms.mean()) if len(terms) else None,
    }


def adversary(world: World, role: str, pid: str, throw_rounds: int) -> dict[str, Any]:
    """One smurf's or thrower's figures from their rating after each of their rounds.

    - smurf: the level they settle at (the median of the last third of their ratings) and how
      many of their rounds it took to come within 100 of it;
    - thrower: their rating before the first thrown round, and how many of their rounds after
      the last thrown one it took to come back within 100 of it.
    """
    who = world.players[pid]
    traj = [(r, v) for r, _, v in world.obs.trajectory.get(pid, [])]
    ratings = [v for _, v in traj]
    info: dict[str, Any] = {
        "role": role,
        "id": pid,
        "skill": round(who.skill, 1),
        "rounds": len(traj),
        "final_rating": ratings[-1] if ratings else None,
        "trajectory": traj,
    }
    if role == "smurf":
        settled = float(np.median(ratings[-max(1, len(ratings) // 3) :])) if ratings else None
        info["settled_at"] = settled
        info["rounds_to_settle"] = (
            rounds_to_within(ratings, settled) if settled is not None else None
        )
        return info
    first, last = world.throw_span.get(pid, (None, None))
    before = [v for r, v in traj if first is not None and r < first]
    during = [v for r, v in traj if first is not None and last is not None and first <= r <= last]
    after = [v for r, v in traj if last is not None and r > last]
    level = before[-1] if before else None
    info.update(
        thrown_rounds=throw_rounds - who.throws_left,
        throw_from=first,
        throw_until=last,
        rating_before=level,
        lowest_while_throwing=min(during) if during else None,
        rating_when_stopped=during[-1] if during else None,
        rounds_after_stop=len(after),
        rounds_after_stop_to_within_100_of_before=(
            rounds_to_within(after, level) if level is not None else None
        ),
        rounds_after_stop_to_within_100_of_skill=rounds_to_within(after, who.skill),
    )
    return info


def _median_or_never(values: list[int | None]) -> float | None:
    """The median, counting 'never' (None) as larger than any number; None if that is it."""
    ordered = sorted(values, key=lambda v: (v is None, v or 0))
    mid = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
    if mid[0] is None or mid[1] is None:
        return None
    return (mid[0] + mid[1]) / 2


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _tune_line(tune: dict[str, Any]) -> str:
    """One auto-tune's row: each parameter before → fitted, the paired gain ± its standard
    error, and the verdict."""
    if tune.get("error"):
        return f"failed: {tune['error']}"
    before = tune.get("before") or {}
    moves = ", ".join(
        f"{k} {before.get(k, float('nan')):.4g} → {v:.4g}" for k, v in tune["fitted"].items()
    )
    gain, se = tune.get("gain"), tune.get("standard_error")
    paired = "" if gain is None else f", gain {gain:.4f}" + ("" if se is None else f" ± {se:.4f}")
    return f"{moves}{paired}: {'adopted' if tune['adopted'] else 'not adopted'}"


def print_summary(console: Console, summary: dict[str, Any]) -> None:
    table = Table(title="synelo simulate", show_header=False)
    for key in (
        "rounds",
        "rounds_applied",
        "journal_rows",
        "expected_journal_rows",
        "duplicate_rows",
        "spearman",
        "spearman_players",
        "map_spearman",
        "spearman_over_map",
        "mean_k",
        "median_k_500",
        "smurf_rounds_to_settle_median",
        "thrower_rounds_after_stop_to_within_100_of_before_median",
        "rating_sd",
        "skill_sd",
        "rating_on_skill_slope",
        "median_abs_rating_minus_skill",
        "brier_recent",
        "brier_truth_recent",
        "map_brier_recent",
        "brier_all",
        "pool_theta",
        "pool_temperature",
        "world_theta",
        "mean_abs_p_gap",
        "scrambles",
        "scrambles_pending",
        "autobalance_moves",
        "reports_buffered",
        "retries_already_applied",
        "reports_dropped",
        "seconds",
    ):
        value = summary.get(key)
        table.add_row(key, _fmt(value) if isinstance(value, float) else str(value))
    for tune in summary.get("autotunes", []):
        table.add_row(f"auto-tune after round {tune['after_round']}", _tune_line(tune))
    for who in summary["adversaries"]:
        table.add_row(
            who["role"], ", ".join(f"{k} {v}" for k, v in who.items() if k not in ("role", "id"))
        )
    console.print(table)
