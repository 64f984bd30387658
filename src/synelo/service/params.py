"""Path and query parameters that the API's routes and the pages both take: a player id and
a round id (each decoded once if `EncodedSlashes` kept its '/' encoded), and a DELETE's
reason.
They live apart from the routes so that a page names them without importing a route."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import unquote

from fastapi import Depends, Path, Query, Request
from pydantic import AfterValidator

from synelo.schemas import storable
from synelo.schemas.fields import ROUND_ID_MAX
from synelo.service.ids import invalid
from synelo.service.middleware.paths import ENCODED


def player_path_id(
    request: Request,
    steam_id: Annotated[
        str, Path(description="SteamID64, or the text id in a text pool (a '/' in it sent as %2F)")
    ],
) -> str:
    """The player id of the URL, decoded once if `EncodedSlashes` kept it encoded."""
    return unquote(steam_id) if request.scope.get(ENCODED) else steam_id


PlayerPathId = Annotated[str, Depends(player_path_id)]


def maybe_storable(value: str | None) -> str | None:
    return None if value is None else storable(value)


# a DELETE's `reason`: the admin log keeps it, so it is text the store can keep
ReasonQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=500, description="why, kept in the pool's admin log"),
    AfterValidator(maybe_storable),
]


def round_path_id(
    request: Request,
    round_id: Annotated[
        str,
        Path(
            description="the round's id (a '/' in it sent as %2F)",
            json_schema_extra={"minLength": 1, "maxLength": ROUND_ID_MAX},
        ),
    ],
) -> str:
    """The round id of the URL, decoded once if `EncodedSlashes` kept it encoded, then
    checked as a report's round_id is: its length is the decoded id's, so that an id of
    128 characters with '/' in it is reachable too."""
    value = unquote(round_id) if request.scope.get(ENCODED) else round_id
    loc = ("path", "round_id")
    if not 1 <= len(value) <= ROUND_ID_MAX:
        raise invalid(loc, f"a round id has 1–{ROUND_ID_MAX} characters", value=value)
    try:
        return storable(value)
    except ValueError as exc:
        raise invalid(loc, str(exc), value=value) from None


# a round id in a path (void, unvoid, the round's JSON and page)
RoundPathId = Annotated[str, Depends(round_path_id)]
