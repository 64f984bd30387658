"""Path and query parameters that the API's routes and the pages both take: a player id
(decoded once if `EncodedSlashes` kept its '/' encoded), a round id, and a DELETE's reason.
They live apart from the routes so that a page names them without importing a route."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import unquote

from fastapi import Depends, Path, Query, Request
from pydantic import AfterValidator

from synelo.schemas import storable
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
# a round id in a path (void, unvoid)
RoundPathId = Annotated[str, Path(min_length=1, max_length=128), AfterValidator(storable)]
