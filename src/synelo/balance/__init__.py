"""Pure split and autobalance solvers (no I/O), shared by the service and the game side."""

from synelo.balance.allplay import all_play_split
from synelo.balance.autobalance import (
    DEAD_TOLERANCE,
    Move,
    Rebalance,
    min_swaps,
    place_joiner,
    transfer_moves,
)
from synelo.balance.sectors_edge import (
    MatchState,
    SectorsEdgePolicy,
    SEMove,
    SEPlayer,
    SizeExemption,
    community_assign,
    community_power,
    party_multiplier,
)
from synelo.balance.solver import Split, SplitSet, best_splits

__all__ = [
    "DEAD_TOLERANCE",
    "MatchState",
    "Move",
    "Rebalance",
    "SEMove",
    "SEPlayer",
    "SectorsEdgePolicy",
    "SizeExemption",
    "Split",
    "SplitSet",
    "all_play_split",
    "best_splits",
    "community_assign",
    "community_power",
    "min_swaps",
    "party_multiplier",
    "place_joiner",
    "transfer_moves",
]
