"""Replays of match histories through the rating models: importers, metrics, tuning, truth
scores against a simulated world, and plots."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "advise",
    "adapters",
    "frc",
    "history",
    "journal",
    "metrics",
    "plots",
    "replay",
    "report",
    "results",
    "stats",
    "truth",
    "tune",
]
