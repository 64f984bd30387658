"""The simulator's PNG plots (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from synelo.sim.metrics import rolling_mean  # noqa: E402

PLOTS = ("brier.png", "spearman.png", "p_gap.png", "scrambles.png", "adversaries.png")


def _finish(
    fig: Any, ax: Any, out: Path, name: str, written: list[str], legend: bool = True, **labels: Any
) -> None:
    """Label the axes, add the legend, write `name` and note it."""
    ax.set(**labels)
    if legend:
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    written.append(name)


def write_plots(out: Path, data: dict[str, Any]) -> list[str]:
    """Write the plots named in PLOTS to `out`; the names written."""
    written: list[str] = []
    terms = np.asarray(data["brier_terms"])
    fig, ax = plt.subplots(figsize=(8, 4))
    if len(terms):
        x = np.arange(1, len(terms) + 1)
        for window in (500, 2000):
            ax.plot(x, rolling_mean(terms, window), label=f"rolling Brier, last {window} rounds")
    ax.axhline(0.25, color="k", ls="--", lw=1, label="design's target 0.25")
    _finish(
        fig,
        ax,
        out,
        "brier.png",
        written,
        xlabel="round (seq)",
        ylabel="Brier (F6)",
        title="Rolling Brier score",
    )

    fig, ax = plt.subplots(figsize=(8, 4))
    snaps = data["snapshots"]
    if snaps:
        rounds = [s["round"] for s in snaps]
        ax.plot(rounds, [s["spearman_100"] for s in snaps], label="players with ≥ 100 rounds")
        ax.plot(
            rounds, [s["spearman_all"] for s in snaps], label="players with ≥ 10 rounds", alpha=0.7
        )
    ax.axhline(0.9, color="k", ls="--", lw=1, label="target 0.90")
    _finish(
        fig,
        ax,
        out,
        "spearman.png",
        written,
        xlabel="round",
        ylabel="Spearman ρ",
        ylim=(0, 1),
        title="Rank correlation of rating with true skill",
    )

    fig, ax = plt.subplots(figsize=(8, 4))
    gaps = np.abs(np.asarray(data["p_a"]) - 0.5)
    true_gaps = np.abs(np.asarray(data["true_p"]) - 0.5)
    bins = [i / 100 for i in range(51)]
    ax.hist(gaps, bins=bins, alpha=0.7, label="|P_A − 0.5| (ratings, F1)")
    ax.hist(true_gaps, bins=bins, alpha=0.5, label="|P − 0.5| (true skills)")
    _finish(
        fig,
        ax,
        out,
        "p_gap.png",
        written,
        xlabel="|P − 0.5|",
        ylabel="rounds",
        title="How even were the rounds played?",
    )

    fig, ax = plt.subplots(figsize=(8, 4))
    total = data["rounds_played"]
    edges = np.arange(0, total + 100, 100)
    done = [r for r, _, ok in data["scrambles"] if ok]
    pending = [r for r, _, ok in data["scrambles"] if not ok]
    if total:
        counts, _ = np.histogram(done, bins=edges)
        ax.plot(edges[:-1], counts, label="scrambles carried out")
        if pending:
            ax.plot(edges[:-1], np.histogram(pending, bins=edges)[0], label="left pending")
    _finish(
        fig,
        ax,
        out,
        "scrambles.png",
        written,
        xlabel="round",
        ylabel="per 100 rounds",
        title="Scrambles per 100 rounds",
    )

    fig, ax = plt.subplots(figsize=(8, 4))
    for who in data["adversaries"]:
        traj = who["trajectory"]
        line = ax.plot([r for r, _ in traj], [v for _, v in traj], label=f"{who['role']} rating")
        ax.axhline(
            who["skill"], color=line[0].get_color(), ls=":", lw=1, label=f"{who['role']} true skill"
        )
        if who["role"] == "thrower" and who["throw_from"] is not None:
            ax.axvspan(
                who["throw_from"], who["throw_until"], alpha=0.1, color="red", label="throwing"
            )
    _finish(
        fig,
        ax,
        out,
        "adversaries.png",
        written,
        legend=bool(data["adversaries"]),
        xlabel="round",
        ylabel="rating",
        title="Adversaries",
    )
    return written
