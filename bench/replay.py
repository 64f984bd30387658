"""Benchmark of the replay: `synelo` against `openskill-pl` on the same FRC seasons.

Method: the FRC CSV files of the chosen years are imported once (the importer's order; 2015
skipped, as in the README's table; without season events, as the figures of
docs/benchmarks.md were measured: the loop timed is the rating's alone). Then, in this one
process, each model replays every match from fresh ratings — predict P(A wins), then
update — through the replay's own loop (`synelo.evaluation.replay.predict_all`); the wall
time of that loop gives matches/s. The
loop runs with the objects alive before it frozen out of the garbage collector's sight
(`gc.freeze`, after an untimed `gc.collect`), as in `synelo replay`: a full collection
traversing the imported history used to land in some runs and not others (2–3 runs of 10–12
of synelo over 2009–2016, 30–90 ms each of a 150 ms loop). This is repeated `--repeat` times,
alternating the models, after one untimed warm-up pass of each over the first 5,000
matches, and the median of each is reported with the ratio synelo/openskill-pl. Targets:
synelo ≥ 50,000 matches/s and ≥ 10× openskill-pl. The machine may be shared: repeat and
read the median.

``--models`` replays other models the same way (`make bench-whr`: ``--models whr,synelo
--years 2016``, whr's target being the season replayed in ≤ 60 s); the targets above are
printed when synelo and openskill-pl both ran.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import synelo.ratings.window as window
from synelo.evaluation.adapters import HistoryInfo, create_replay
from synelo.evaluation.frc import import_frc
from synelo.evaluation.replay import predict_all

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "frc"
DEFAULT_YEARS = "2009,2010,2011,2012,2013,2014,2016"
DEFAULT_MODELS = "synelo,openskill-pl"
TARGET_WHR_S = 60.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help=f"folder of <year>.csv (default {DEFAULT_DATA})",
    )
    parser.add_argument("--years", default=DEFAULT_YEARS, help="comma-separated years")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--models", default=DEFAULT_MODELS, help="comma-separated models, each timed alike"
    )
    args = parser.parse_args()
    files = [args.data / f"{y.strip()}.csv" for y in args.years.split(",")]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        print(f"missing: {', '.join(missing)} (pass --data DIR)", file=sys.stderr)
        return 1
    matches = import_frc(files, seasons=False).matches
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    print(f"FRC {args.years}: {len(matches):,} matches, {args.repeat} runs per model")
    compiled = not window.__file__.endswith(".py")
    # which build of the shared math is running (setup.py compiles it with mypyc)
    print(
        f"synelo.ratings: {'compiled by mypyc' if compiled else 'pure Python'} "
        f"({Path(window.__file__).name})"
    )
    rates: dict[str, list[float]] = {name: [] for name in names}
    for name in rates:  # warm-up, not timed: the first pass of a process runs markedly slower
        predict_all(create_replay(name, {}, HistoryInfo(3)), matches[:5000])
    for run in range(args.repeat):
        for name in rates:
            model = create_replay(name, {}, HistoryInfo(3))
            _, seconds = predict_all(model, matches)
            rates[name].append(len(matches) / seconds)
            print(f"  run {run + 1} {name:>12}: {rates[name][-1]:>9,.0f} matches/s")
    median = {name: statistics.median(runs) for name, runs in rates.items()}
    for name, rate in median.items():
        print(
            f"median {name:<12} {rate:>9,.0f} matches/s ({len(matches) / rate:.1f} s for "
            f"{len(matches):,} matches, runs {min(rates[name]):,.0f}–{max(rates[name]):,.0f})"
        )
    if "whr" in median:
        seconds = len(matches) / median["whr"]
        verdict = "met" if seconds <= TARGET_WHR_S else "NOT met"
        print(f"whr replay in <= {TARGET_WHR_S:.0f} s: {seconds:.1f} s, {verdict}")
    if "synelo" not in median or "openskill-pl" not in median:
        return 0
    synelo, openskill = median["synelo"], median["openskill-pl"]
    ratio = synelo / openskill
    print(f"synelo >= 50,000 matches/s: {'met' if synelo >= 50_000 else 'NOT met'}")
    print(
        f"ratio synelo/openskill-pl {ratio:.2f} (target >= 10: "
        f"{'met' if ratio >= 10 else 'NOT met'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
