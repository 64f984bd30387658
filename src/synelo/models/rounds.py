"""What a model reads of a round, and one round rated by a model other than SynElo.

The live round path (`synelo.store`) and the recompute (`synelo.models.recompute`) both turn
a stored report into `RoundFacts` here and rate a non-SynElo round through `rate_with_model`,
so that a re-rate with a pool's own model gives back every stored rating.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from synelo.models.base import NO_CONTEXT, Model, RoundFacts
from synelo.ratings.synelo import Side

# The keys of a stored report (RoundReport.stored) that are not optional round fields.
REPORT_BASE = ("round_id", "server_id", "winner", "teams", "participants")
# A stored report's mark that it was imported from a history without a time for it
# (`synelo pool import`): its received_at says when it was imported, not when it was played.
UNDATED = "undated"
INT_LIMIT = 2**31 - 1


def column_int(value: float) -> int:
    """A display rating as the integer columns keep it, clamped inside 32 bits."""
    return max(-INT_LIMIT, min(INT_LIMIT, round(value)))


def report_facts(report: Mapping[str, Any], received: datetime | None = None) -> RoundFacts:
    """What a model reads of a stored report (`RoundReport.stored`): the map among the
    optional fields, when there is one, and when the round was `received`."""
    teams, part = report["teams"], report["participants"]
    extras = {
        key: value for key, value in report.items() if key not in REPORT_BASE and key != "map"
    }
    return RoundFacts(
        tuple(teams["A"]),
        tuple(teams["B"]),
        report["winner"],
        tuple(part["A"]),
        tuple(part["B"]),
        received_extras(extras, report.get("map"), received),
    )


def received_extras(
    extras: Mapping[str, Any], map_name: str | None, received: datetime | None
) -> dict[str, Any]:
    """A round's optional fields as a model reads them: with the map when there is one,
    and `received_at` (ISO 8601) when the round was received, which dates it for models
    whose ratings are per day (WHR's W11) when it reports no time of its own."""
    out = dict(extras)
    if map_name:
        out["map"] = map_name
    if received is not None:
        out["received_at"] = received.isoformat()
    return out


class ModelRated(NamedTuple):
    """A round rated by a model other than SynElo: P_A, the rosters' strength sums (whole
    points), each rated player's (key, side, display before, display after), their new
    states and the pool context entries the round changed."""

    p_a: float
    sum_a: int
    sum_b: int
    changes: tuple[tuple[str, Side, int, int], ...]
    states: dict[str, Any]
    context: dict[str, Any]


def rate_with_model(
    model: Model[Any],
    states: Mapping[str, Any],
    facts: RoundFacts,
    context: Mapping[str, Any] = NO_CONTEXT,
) -> ModelRated:
    """Rate one round with `model` from the stored `states` of its players (those absent
    are new) and the pool's context entries of the round: the one computation of the live
    service and the re-rate."""
    new_display = column_int(model.rating(model.new_state()))

    def display(key: str) -> int:
        return column_int(model.rating(states[key])) if key in states else new_display

    rosters = [model.state_of(states, p) for p in (*facts.team_a, *facts.team_b)]
    each = model.strengths(rosters, facts)
    strength_a, strength_b = sum(each[: len(facts.team_a)]), sum(each[len(facts.team_a) :])
    outcome = model.rate(states, facts, context)
    changes = tuple(
        (key, side, display(key), column_int(model.rating(outcome.states[key])))
        for key, side in facts.rated()
    )
    return ModelRated(
        outcome.p_a,
        column_int(strength_a),
        column_int(strength_b),
        changes,
        outcome.states,
        outcome.context,
    )
