"""HTTP client of API v1 with the game server's delivery semantics (retry ring buffer for round
reports, split cache for scrambles)."""

from synelo.client.api import RoundFields, SyneloClient, round_body
from synelo.client.delivery import (
    BUFFER_SLOTS,
    DeliveryStats,
    RoundReporter,
    SplitCache,
    new_round_id,
)
from synelo.client.typedefs import (
    Autobalance,
    Conflict,
    Forbidden,
    Invalid,
    JournalEntry,
    Move,
    NotFound,
    Player,
    PlayerChange,
    PoolInfo,
    RequestRejected,
    RoundResult,
    ServiceUnavailable,
    Split,
    SyneloError,
    Unauthorized,
)

__all__ = [
    "BUFFER_SLOTS",
    "Autobalance",
    "Conflict",
    "DeliveryStats",
    "Forbidden",
    "Invalid",
    "JournalEntry",
    "Move",
    "NotFound",
    "Player",
    "PlayerChange",
    "PoolInfo",
    "RequestRejected",
    "RoundFields",
    "RoundReporter",
    "RoundResult",
    "ServiceUnavailable",
    "Split",
    "SplitCache",
    "SyneloClient",
    "SyneloError",
    "Unauthorized",
    "new_round_id",
    "round_body",
]
