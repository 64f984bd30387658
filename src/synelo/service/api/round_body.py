"""A round's body as the domain takes it: the rosters' ids normalised and checked, the
optional fields in canonical form, and the pool's model's own check, each refusal a 422
naming its field. A round report and a prediction read their bodies alike."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from synelo.domain import Pool, RoundReport
from synelo.models import Model, RoundError, RoundFacts
from synelo.schemas import CommandSpan, PlayedSpan, PredictIn, RoundIn
from synelo.service.ids import Loc, invalid, normalize_id, normalize_ids


def to_report(body: RoundIn, pool: Pool) -> RoundReport:
    """Normalise ids and check the rosters: no player twice, none on both sides."""
    kind = pool.player_ids
    seen: dict[str, Loc] = {}
    team_a = normalize_ids(body.teams.A, kind, ("body", "teams", "A"), seen)
    team_b = normalize_ids(body.teams.B, kind, ("body", "teams", "B"), seen)
    if body.participants is None:
        part_a, part_b = team_a, team_b
    else:
        seen_p: dict[str, Loc] = {}
        part_a = normalize_ids(body.participants.A, kind, ("body", "participants", "A"), seen_p)
        part_b = normalize_ids(body.participants.B, kind, ("body", "participants", "B"), seen_p)
        if not part_a and not part_b:
            raise invalid(("body", "participants"), "at least one participant is needed")
        # A participant is rated on one side only: the side of its round-start team, if any.
        for side, part, other in (("A", part_a, set(team_b)), ("B", part_b, set(team_a))):
            for i, key in enumerate(part):
                if key in other:
                    raise invalid(
                        ("body", "participants", side, i),
                        f"player {key} is on the other team in teams",
                    )
    extras = round_extras(body, kind, {"A": {*team_a, *part_a}, "B": {*team_b, *part_b}})
    return RoundReport(
        body.round_id, body.server_id, body.map, body.winner, team_a, team_b, part_a, part_b, extras
    )


def check_round(model: Model[Any], facts: RoundFacts, rated: bool = True) -> None:
    """The model's own check of a round or a prediction (`Model.check_round`), a
    RoundError as a 422 naming the field."""
    try:
        model.check_round(facts, rated)
    except RoundError as exc:
        raise invalid(("body", *exc.field), exc.message) from None


PER_PLAYER = ("time_played", "positions", "player_scores", "names")


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def round_extras(  # noqa: C901
    body: RoundIn | PredictIn, kind: str, players: dict[str, set[str]]
) -> dict[str, Any]:
    """The optional fields in canonical form (`RoundReport.extras`). A player named in a
    per-player field must be in the round (a roster or the participants), and a commander
    on their own team: else a 422 naming the field. A prediction's body has some of the
    fields only."""
    extras: dict[str, Any] = {}
    if body.mode is not None:
        extras["mode"] = body.mode
    started, ended = getattr(body, "started_at", None), getattr(body, "ended_at", None)
    if started is not None:
        extras["started_at"] = _utc(started)
    if ended is not None:
        extras["ended_at"] = _utc(ended)
    for name in ("duration",):
        if getattr(body, name, None) is not None:
            extras[name] = getattr(body, name)
    if body.sides is not None:
        extras["sides"] = {"A": body.sides.A, "B": body.sides.B}
    scores = getattr(body, "scores", None)
    if scores is not None:
        extras["scores"] = {"A": scores.A, "B": scores.B}
    if body.commanders is not None:
        commanders: dict[str, Any] = {}
        for side, chosen in (("A", body.commanders.A), ("B", body.commanders.B)):
            loc: Loc = ("body", "commanders", side)
            span = chosen if isinstance(chosen, CommandSpan) else None
            named = chosen if span is None else span.player
            if span is not None:
                loc = (*loc, "player")
            key = normalize_id(named, kind, loc)
            if key not in players[side]:
                raise invalid(loc, f"player {key} is not on team {side} in this round", value=named)
            commanders[side] = (
                key if span is None else {"player": key, "from": span.from_, "to": span.to}
            )
        extras["commanders"] = commanders
    everyone = players["A"] | players["B"]
    for name in PER_PLAYER:
        given: dict[str, Any] | None = getattr(body, name, None)
        if given is None:
            continue
        canonical: dict[str, Any] = {}
        for raw, value in given.items():
            loc = ("body", name, raw)
            key = normalize_id(raw, kind, loc)
            if key not in everyone:
                raise invalid(loc, f"player {key} is not in this round", value=raw)
            if key in canonical:
                raise invalid(loc, f"player {key} is listed twice", value=raw)
            canonical[key] = (
                {"from": value.from_, "to": value.to} if isinstance(value, PlayedSpan) else value
            )
        extras[name] = canonical
    return extras
