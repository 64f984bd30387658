"""Rich tables of replay and tuning results (the command line prints them)."""

from __future__ import annotations

from rich.table import Table

from synelo.evaluation.advise import Advice, Row
from synelo.evaluation.metrics import Scores
from synelo.evaluation.replay import ReplayResult
from synelo.evaluation.results import ResultCalibration
from synelo.evaluation.tune import TuneResult

_COLUMNS = ("matches", "ties", "accuracy", "log loss", "Brier", "ECE")


def _fmt(x: float | None, digits: int = 4) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _cells(s: Scores) -> list[str]:
    return [
        f"{s.matches:,}",
        f"{s.ties:,}",
        _fmt(s.accuracy),
        _fmt(s.log_loss),
        _fmt(s.brier),
        _fmt(s.ece),
    ]


def scores_table(result: ReplayResult) -> Table:
    """Overall, per team size and per match type."""
    table = Table(
        title=f"{result.model}: {len(result.predictions):,} matches replayed at "
        f"{result.matches_per_s:,.0f} matches/s"
    )
    table.add_column("scored matches")
    for name in _COLUMNS:
        table.add_column(name, justify="right")
    table.add_row("all", *_cells(result.overall), style="bold")
    for label, group in (("size", result.by_size), ("type", result.by_type)):
        for key, s in group.items():
            table.add_row(f"{label} {key}", *_cells(s))
    return table


def reliability_table(scores: Scores) -> Table:
    table = Table(title=f"calibration: 10 bins, ECE {_fmt(scores.ece)}")
    for name in ("predicted P(A)", "matches", "mean P", "observed (tie = 0.5)", "gap"):
        table.add_column(name, justify="right")
    for b in scores.reliability:
        gap = None if b.mean_p is None or b.observed is None else b.observed - b.mean_p
        table.add_row(
            f"{b.low:.1f}–{b.high:.1f}",
            f"{b.count:,}",
            _fmt(b.mean_p, 3),
            _fmt(b.observed, 3),
            "–" if gap is None else f"{gap:+.3f}",
        )
    return table


def tune_table(result: TuneResult) -> Table:
    table = Table(
        title=f"{result.model}: fitted on {result.train_matches:,} matches, "
        f"scored on the next {result.test_matches:,}"
    )
    table.add_column("parameters")
    table.add_column("train log loss", justify="right")
    for name in _COLUMNS[1:]:
        table.add_column(f"test {name}", justify="right")
    for label, point, train, test in (
        ("default", result.defaults, result.train_log_loss_default, result.test_default),
        ("fitted", result.fitted, result.train_log_loss_fitted, result.test_fitted),
    ):
        params = ", ".join(f"{k} {v:.4g}" for k, v in point.items())
        table.add_row(f"{label}: {params}", _fmt(train), *_cells(test)[1:])
    return table


def results_table(calibration: ResultCalibration) -> Table:
    """Each final score's mean predicted probability beside how often it came."""
    table = Table(
        title=f"predicted results over {calibration.matches:,} scored matches: log loss "
        f"{_fmt(calibration.log_loss)} (every result alike: {calibration.uniform_log_loss:.4f})"
    )
    for name in ("result A:B", "predicted", "observed", "gap"):
        table.add_column(name, justify="right")
    for row in calibration.to_json()["results"]:
        gap = row["observed"] - row["predicted"]
        table.add_row(
            row["result"], f"{row['predicted']:.3f}", f"{row['observed']:.3f}", f"{gap:+.3f}"
        )
    return table


def advice_table(advice: Advice) -> Table:
    """`synelo advise`'s rows, best first: the newer part's scores and each row's gap to the
    recommendation (± its paired SE)."""
    table = Table(
        title=f"tuned on the older {advice.older:,} rounds, scored on the newer {advice.newer:,}"
    )
    for name in ("model", "setting", "parameters"):
        table.add_column(name)
    for name in ("log loss", "Brier", "ECE", "in the large", "slope", "gap to best"):
        table.add_column(name, justify="right")
    gaps = {(m.other, m.setting): m for m in advice.gaps}
    for row in sorted(advice.rows, key=lambda r: (r.scores.log_loss is None, r.scores.log_loss)):
        gap = gaps.get((row.model, row.setting))
        if row is advice.best:
            gap_text = "best"
        elif gap is None:
            gap_text = "–"
        else:
            mark = " *" if gap.beyond_noise else ""
            gap_text = f"{gap.difference:+.4f} ± {gap.se:.4f}{mark}"
        cal = row.calibration
        table.add_row(
            row.model + _advice_note(row),
            row.setting,
            row.params_text(),
            _fmt(row.scores.log_loss),
            _fmt(row.scores.brier),
            _fmt(row.scores.ece),
            "–" if cal.in_the_large is None else f"{cal.in_the_large:+.3f}",
            _fmt(cal.slope, 2),
            gap_text,
            style="bold" if row is advice.best else None,
        )
    return table


def _advice_note(row: Row) -> str:
    """What a row of the advice is beside a general model's: the pool's own, or Elo's."""
    if row.setting == "current":
        return " (the pool's)"
    return "" if row.general else " (reference)"
