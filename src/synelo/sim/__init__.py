"""Closed-loop simulation of game servers, players and the service (`synelo simulate`)."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "faults",
    "foosball",
    "history",
    "metrics",
    "plots",
    "run",
    "scoreboard",
    "sectors_edge_splits",
    "service",
    "world",
]
