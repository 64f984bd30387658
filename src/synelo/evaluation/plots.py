"""`--plot`: one PNG with the reliability diagram and the log loss over time (matplotlib,
Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from synelo.evaluation.metrics import log_losses
from synelo.evaluation.replay import ReplayResult


def rolling_log_loss(result: ReplayResult, points: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """(match number, mean log loss of the scored decided matches in the window ending
    there), over windows of 1/`points` of them (at least 50 matches)."""
    index = np.flatnonzero(result.scored & (result.outcomes != 0.5))
    losses = log_losses(result.predictions[index], result.outcomes[index])
    width = max(50, len(losses) // points)
    if len(losses) < width:
        return np.array([]), np.array([])
    sums = np.convolve(losses, np.ones(width), mode="valid") / width
    return index[width - 1 :] + 1, sums


def plot_replay(result: ReplayResult, path: Path | str, title: str = "") -> Path:
    """Write the reliability diagram (left) and the rolling log loss (right) to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    bins = [b for b in result.overall.reliability if b.count]
    left.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfect")
    left.plot(
        [b.mean_p for b in bins],
        [b.observed for b in bins],
        marker="o",
        label=f"{result.model} (ECE {result.overall.ece or 0:.3f})",
    )
    counts = left.twinx()
    counts.bar(
        [(b.low + b.high) / 2 for b in bins],
        [b.count for b in bins],
        width=0.09,
        alpha=0.15,
        color="tab:blue",
    )
    counts.set_ylabel("matches per bin")
    left.set(
        xlim=(0, 1),
        ylim=(0, 1),
        xlabel="predicted P(A wins)",
        ylabel="observed A score (tie = 0.5)",
        title="reliability",
    )
    left.legend(loc="upper left")
    x, y = rolling_log_loss(result)
    right.plot(x, y, linewidth=1)
    right.axhline(np.log(2), color="grey", linestyle="--", linewidth=1, label="coin flip ln 2")
    right.set(xlabel="match", ylabel="log loss (rolling mean)", title="log loss over time")
    right.legend(loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
