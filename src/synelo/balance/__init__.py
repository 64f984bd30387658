"""Pure split and autobalance solvers (no I/O), shared by the service and the game side."""

from synelo.balance.allplay import all_play_split
from synelo.balance.autobalance import (
    Move,
    Rebalance,
    min_swaps,
    place_joiner,
    transfer_moves,
)
from synelo.balance.sectors_edge import MatchState, SectorsEdgePolicy, SEMove, SEPlayer
from synelo.balance.solver import Split, SplitSet, best_splits

__all__ = [
    "MatchState",
    "Move",
    "Rebalance",
    "SEMove",
    "SEPlayer",
    "SectorsEdgePolicy",
    "Split",
    "SplitSet",
    "all_play_split",
    "best_splits",
    "min_swaps",
    "place_joiner",
    "transfer_moves",
]
