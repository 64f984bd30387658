"""python -m plugin.emulate: watch the real synelo.smx run a TF2 server against a service.

    python -m plugin.emulate --mode koth --players 13 --rounds 6 \\
        --url http://127.0.0.1:8000 --token SERVER_TOKEN [--pool default] --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

from plugin.emulate.engine import PluginError
from plugin.emulate.game import MODES
from plugin.emulate.scenario import Options, run


def _outage(text: str) -> tuple[int, int]:
    first, _, count = text.partition(":")
    try:
        return int(first), int(count or "1")
    except ValueError as exc:
        raise argparse.ArgumentTypeError("FIRST:ROUNDS, e.g. 2:12") from exc


def _convar(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError("NAME=VALUE")
    return name, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m plugin.emulate",
        description="Run plugin/plugins/synelo.smx (built when missing or stale) on an "
        "emulated TF2 server against a synelo service, and write what happened.",
    )
    parser.add_argument("--mode", choices=MODES, default="koth")
    parser.add_argument("--players", type=int, default=13, help="players at map start")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--url", required=True, help="the service's base URL")
    parser.add_argument("--token", required=True, help="a server token of the service")
    parser.add_argument("--pool", default="default", help="sm_synelo_pool")
    parser.add_argument("--json", type=Path, help="write the record here (else stdout)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-clients", type=int, default=0, help="server slots, up to 101")
    parser.add_argument("--long-names", action="store_true", help="32-byte names")
    parser.add_argument("--late-joiners", type=int, default=0, help="join during round 2")
    parser.add_argument("--leavers", type=int, default=0, help="leave during round 2")
    parser.add_argument("--outage", type=_outage, help="FIRST:ROUNDS the service is down")
    parser.add_argument("--votes", action="store_true", help="everyone votes in round 2")
    parser.add_argument("--admins", type=int, default=0, help="the first N are admins")
    parser.add_argument(
        "--set",
        type=_convar,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a ConVar, as in the server's cfg",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.players <= 101 or args.rounds < 0:
        parser.error("--players must be 1..101 and --rounds at least 0")
    if not 0 <= args.max_clients <= 101:
        parser.error("--max-clients must be 1..101 (SourceMod 1.12's MAXPLAYERS), or 0: as needed")
    if args.outage and (args.outage[0] < 1 or args.outage[1] < 1):
        parser.error("--outage FIRST:ROUNDS: a round number from 1 and at least 1 round")
    if urlsplit(args.url).scheme not in ("http", "https") or not urlsplit(args.url).netloc:
        parser.error(f"--url must be an http:// or https:// address, not {args.url!r}")
    if args.json and not args.json.parent.is_dir():
        parser.error(f"--json: no folder {args.json.parent}")
    options = Options(
        mode=args.mode,
        players=args.players,
        rounds=args.rounds,
        url=args.url,
        token=args.token,
        pool=args.pool,
        seed=args.seed,
        max_clients=args.max_clients,
        long_names=args.long_names,
        late_joiners=args.late_joiners,
        leavers=args.leavers,
        outage=args.outage,
        votes=args.votes,
        admins=args.admins,
        convars=dict(args.set),
    )
    try:
        result = run(options)
    except (RuntimeError, ValueError, PluginError, OSError) as exc:
        print(f"plugin.emulate: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
        stored = sum(1 for r in result["rounds"] if r["stored"])
        print(
            f"{len(result['rounds'])} rounds, {stored} stored, "
            f"{len(result['scrambles'])} scrambles, {len(result['moves'])} moves: {args.json}"
        )
    else:
        print(text)
    answered = [x["status"] for x in result["requests"]]
    if answered and not any(200 <= status < 300 for status in answered):
        last = answered[-1]
        why = "refused the token or pool" if last in (401, 403, 404) else "never answered"
        print(
            f"plugin.emulate: the service {why} (last: HTTP {last}); see the log", file=sys.stderr
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
