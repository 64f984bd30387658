"""Log loss of every general model against plain Elo on simulated histories of every shape.

Each shape is a `synelo simulate-history` ns2 world (`synelo.sim.shapes`): 1v1 to 12v12, the
world as it is and with one feature changed (no times, no sides nor commanders, scores,
30 % of rounds k + 1 against k), then with all of them changed ("bare"). Every model replays
each history at its defaults, as `synelo replay` does, after `--warmup` matches learned from
and never scored. The table gives each model's log loss (decided matches) and its ratio to
Elo's, and whether every general model is within 3 % of Elo (met). docs/evaluation.md's
"History shapes" table is this script's output:

    .venv/bin/python scripts/shape_table.py --matches 6000 --players 300 --warmup 1500
"""

from __future__ import annotations

import argparse

from synelo.sim.shapes import BASELINE, GENERAL, SIZES, TOLERANCE, VARIANTS, check_shapes


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="team sizes, by commas")
    p.add_argument("--variants", default=",".join(VARIANTS), help="variants, by commas")
    p.add_argument("--matches", type=int, default=6000)
    p.add_argument("--players", type=int, default=300)
    p.add_argument("--warmup", type=int, default=1500, help="matches learned from, not scored")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    variants = args.variants.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        p.error(f"unknown variants {', '.join(sorted(unknown))} (known: {', '.join(VARIANTS)})")
    models = (BASELINE, *GENERAL)
    print(f"| shape | scored | {' | '.join(models)} | within {TOLERANCE:.0%} of elo |")
    print("| --- | ---: |" + " ---: |" * len(models) + " --- |")
    met = total = 0
    for row in check_shapes(
        sizes,
        variants,
        matches=args.matches,
        players=args.players,
        warmup=args.warmup,
        seed=args.seed,
    ):
        cells = [f"{row.loss[BASELINE]:.4f}"]
        for model in GENERAL:
            cell = f"{row.loss[model]:.4f} ({row.ratio(model):.3f})"
            cells.append(f"**{cell}**" if row.ratio(model) > 1 + TOLERANCE else cell)
        met += row.met()
        total += 1
        shape = f"{row.size}v{row.size} {row.variant}"
        verdict = "met" if row.met() else "not met"
        print(f"| {shape} | {row.scored:,} | {' | '.join(cells)} | {verdict} |", flush=True)
    print(f"\n{met} of {total} shapes met (bold: more than {TOLERANCE:.0%} above elo)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
