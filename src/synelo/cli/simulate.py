"""The simulators: `simulate`, a closed loop against the service, and
`simulate-history`, an open-loop world that writes a history and its truth."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from synelo.cli.app import app, console, fail


def _outage(value: str) -> tuple[int, int]:
    start, sep, length = value.partition(":")
    if not sep or not start.isdigit() or not length.isdigit():
        raise typer.BadParameter(f"--outage takes ROUND:ROUNDS, not {value!r}")
    return int(start), int(length)


@app.command("simulate")
def simulate_cmd(
    players: Annotated[int, typer.Option(min=4, help="population size")] = 200,
    servers: Annotated[int, typer.Option(min=1, help="game servers feeding the pool")] = 4,
    team_size: Annotated[int, typer.Option(min=2, max=32, help="players a team (12: 12v12)")] = 12,
    rounds: Annotated[int, typer.Option(min=1, help="rounds, over all servers")] = 20_000,
    seed: Annotated[int, typer.Option(help="random seed")] = 1,
    out: Annotated[Path, typer.Option(help="folder for summary.json and the plots")] = Path(
        "sim-out"
    ),
    url: Annotated[
        str | None, typer.Option(help="a running service (default: in-process on loopback)")
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(envvar="SYNELO_TOKEN", help="admin token for --url (or SYNELO_TOKEN)"),
    ] = None,
    mode: Annotated[str, typer.Option(help="arena, koth, cp, ctf, payload, attack_defend")] = (
        "koth"
    ),
    skill_mean: Annotated[float, typer.Option(help="true skill: normal mean")] = 1000.0,
    skill_sd: Annotated[float, typer.Option(help="true skill: standard deviation")] = 300.0,
    skill_dist: Annotated[str, typer.Option(help="true skill: normal or uniform")] = "normal",
    churn: Annotated[
        float, typer.Option(min=0, max=1, help="chance a player leaves during a round")
    ] = 0.02,
    autobalance: Annotated[str, typer.Option(help="f11 or sectors_edge")] = "f11",
    fail_first: Annotated[
        float,
        typer.Option(min=0, max=1, help="share of round reports whose first attempt fails (503)"),
    ] = 0.0,
    lose_responses: Annotated[
        float, typer.Option(min=0, max=1, help="share of report answers lost after apply")
    ] = 0.0,
    outage: Annotated[
        list[str] | None, typer.Option(help="ROUND:ROUNDS the service is unreachable (repeatable)")
    ] = None,
    restart_at: Annotated[
        list[int] | None,
        typer.Option(help="restart the in-process service before this round (repeatable)"),
    ] = None,
    thrower: Annotated[
        bool,
        typer.Option(help="from round R/2 a player near mean + 1 sd loses 200 of their rounds"),
    ] = False,
    throwers: Annotated[int, typer.Option(min=1, help="how many throwers, with --thrower")] = 1,
    smurf: Annotated[
        bool, typer.Option(help="a new account R_0 + 600 strong joins at round R/4")
    ] = False,
    smurfs: Annotated[int, typer.Option(min=1, help="how many smurfs, with --smurf")] = 1,
    world_theta: Annotated[
        float | None,
        typer.Option(
            min=1e-9, help="the world's scale for true skills (default 400·floor((k+1)/2))"
        ),
    ] = None,
    pool_theta: Annotated[
        float | None, typer.Option(min=1e-9, help="the new pool's Θ (default: the service's)")
    ] = None,
    pool_param: Annotated[
        list[str] | None,
        typer.Option(
            help="a rating parameter of the new pool, KEY=VALUE (repeatable), e.g. sigma=400 "
            "or convergence=seed"
        ),
    ] = None,
    autotune: Annotated[
        bool,
        typer.Option(
            help="the new pool's auto-tuning: the service's default (on: its Θ), checked "
            "before each round; --no-autotune: off"
        ),
    ] = True,
    progress: Annotated[bool, typer.Option(help="show the progress bar")] = True,
) -> None:
    """A closed loop: players with hidden skill on game servers (synelo.game + synelo.client)
    against the service; writes summary.json and PNG plots to OUT."""
    from synelo.client import RequestRejected
    from synelo.game import MODES
    from synelo.sim.run import SimConfig, simulate

    if mode not in MODES:
        raise fail(f"unknown mode {mode!r} (one of {', '.join(MODES)})")
    if autobalance not in ("f11", "sectors_edge"):
        raise fail("--autobalance is f11 or sectors_edge")
    if players < 2 * team_size:
        raise fail(f"{players} players cannot fill a {team_size}v{team_size}")
    params: dict[str, float | str] = {}
    for item in pool_param or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise fail(f"--pool-param takes KEY=VALUE, not {item!r}")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            params[key.strip()] = value.strip()  # a name, e.g. convergence=seed
    config = SimConfig(
        players=players,
        servers=servers,
        team_size=team_size,
        rounds=rounds,
        seed=seed,
        out=out,
        url=url,
        token=token,
        mode=mode,
        skill_mean=skill_mean,
        skill_sd=skill_sd,
        skill_dist=skill_dist,
        churn=churn,
        autobalance=autobalance,
        fail_first=fail_first,
        lose_responses=lose_responses,
        outages=[_outage(v) for v in outage or []],
        restarts=restart_at or [],
        thrower=thrower,
        throwers=throwers,
        smurf=smurf,
        smurfs=smurfs,
        world_theta=world_theta,
        pool_theta=pool_theta,
        pool_params=params,
        autotune=autotune,
        progress=progress,
    )
    try:
        simulate(config, console)
    except (ValueError, RequestRejected) as exc:  # e.g. a --pool-param the service refuses
        raise fail(str(exc)) from None
    console.print(f"wrote {out / 'summary.json'} and the plots in {out}")


@app.command("simulate-history")
def simulate_history_cmd(
    out: Annotated[Path, typer.Argument(help="the history to write (JSON Lines)", dir_okay=False)],
    truth: Annotated[
        Path, typer.Option(help="where to write the hidden truth (JSON)", dir_okay=False)
    ],
    world: Annotated[
        Literal["ns2", "foosball", "scoreboard"],
        typer.Option(
            help="ns2: side offsets, maps, commanders; foosball: 2v2 with offense and "
            "defense; scoreboard: modes of 3v3–12v12, parties and points"
        ),
    ] = "ns2",
    matches: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="rounds to play [default: ns2 20,000, foosball 5,000, scoreboard 10,000]",
            show_default=False,
        ),
    ] = None,
    players: Annotated[
        int | None,
        typer.Option(
            min=4,
            help="population size [default: ns2 300, foosball 40, scoreboard 400]",
            show_default=False,
        ),
    ] = None,
    team_size: Annotated[
        int,
        typer.Option(
            min=1, max=32, help="players a team (8: 8v8; 1 needs --no-commanders; ns2 only)"
        ),
    ] = 8,
    seed: Annotated[int, typer.Option(help="random seed")] = 1,
    uneven_share: Annotated[
        float,
        typer.Option(
            min=0, max=1, help="share of rounds that start k + 1 against k (0: none; ns2 only)"
        ),
    ] = 0.0,
    extra_player_bonus: Annotated[
        float,
        typer.Option(help="logit the larger side of an uneven round gains beyond L (ns2 only)"),
    ] = 0.0,
    leave_rate: Annotated[
        float,
        typer.Option(min=0, max=1, help="a non-commander's chance to leave mid-round (ns2 only)"),
    ] = 0.15,
    scores: Annotated[
        bool,
        typer.Option(
            "--scores/--no-scores",
            help="each round reports both sides' points from its latent margin (ns2 only)",
        ),
    ] = False,
    sides: Annotated[
        bool,
        typer.Option(
            "--sides/--no-sides",
            help="side offsets and map biases; --no-sides: a symmetric game (ns2 only)",
        ),
    ] = True,
    commanders: Annotated[
        bool,
        typer.Option(
            "--commanders/--no-commanders",
            help="a commander a team, in a chair; --no-commanders: everyone fights (ns2 only)",
        ),
    ] = True,
    times: Annotated[
        bool,
        typer.Option("--times/--no-times", help="--no-times: the rows carry no `time` (ns2 only)"),
    ] = True,
) -> None:
    """An open-loop simulated world: write its history and the hidden truth for `synelo
    replay --truth`. ns2 (the default): side offsets, maps, commanders, late joiners and
    leavers, optionally k + 1 against k rounds, scores, a symmetric game, no commanders
    or no times; foosball: 2v2 to 10 goals with offense and
    defense skills; scoreboard: Sector's Edge-like modes with parties and points."""
    import time
    from dataclasses import replace

    start = time.perf_counter()
    if world != "ns2":
        ns2_only = {
            "--team-size": team_size != 8,
            "--uneven-share": uneven_share != 0.0,
            "--extra-player-bonus": extra_player_bonus != 0.0,
            "--leave-rate": leave_rate != 0.15,
            "--scores": scores,
            "--no-sides": not sides,
            "--no-commanders": not commanders,
            "--no-times": not times,
        }
        if given := [name for name, changed in ns2_only.items() if changed]:
            raise fail(f"--world {world} does not take {', '.join(given)} (ns2 only)")
        try:
            if world == "foosball":
                from synelo.sim import foosball

                base_f = foosball.FoosballConfig(seed=seed)
                config_f = replace(
                    base_f,
                    players=base_f.players if players is None else players,
                    matches=base_f.matches if matches is None else matches,
                )
                n, n_players = foosball.write(config_f, out, truth), config_f.players
                shape = f"2v2 foosball to {config_f.goals} goals"
            else:
                from synelo.sim import scoreboard

                base_s = scoreboard.ScoreboardConfig(seed=seed)
                config_s = replace(
                    base_s,
                    players=base_s.players if players is None else players,
                    matches=base_s.matches if matches is None else matches,
                )
                n, n_players = scoreboard.write(config_s, out, truth), config_s.players
                shape = "scoreboard: " + ", ".join(config_s.modes)
        except ValueError as exc:
            raise fail(str(exc)) from None
        console.print(
            f"wrote {n:,} matches of {n_players:,} players ({shape}, seed {seed}) "
            f"to [bold]{out}[/] and the truth to [bold]{truth}[/] in "
            f"{time.perf_counter() - start:.1f} s"
        )
        return

    from synelo.sim.history import HistoryWorldConfig, write

    players = 300 if players is None else players
    config = HistoryWorldConfig(
        players=players,
        matches=20_000 if matches is None else matches,
        team_size=team_size,
        seed=seed,
        uneven_share=uneven_share,
        extra_player_bonus=extra_player_bonus,
        leave_rate=leave_rate,
        scores=scores,
        sides=sides,
        commanders=commanders,
        times=times,
    )
    try:
        n = write(config, out, truth)
    except ValueError as exc:
        raise fail(str(exc)) from None
    shape = (
        f"{team_size}v{team_size}"
        + (f", {uneven_share:.0%} {team_size + 1}v{team_size}" if uneven_share > 0 else "")
        + (", with scores" if scores else "")
        + (", no sides" if not sides else "")
        + (", no commanders" if not commanders else "")
        + (", no times" if not times else "")
    )
    console.print(
        f"wrote {n:,} matches of {players:,} players ({shape}, seed {seed}) "
        f"to [bold]{out}[/] and the truth to [bold]{truth}[/] in "
        f"{time.perf_counter() - start:.1f} s"
    )
