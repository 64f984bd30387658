"""Player ids: 17-digit SteamID64s (as JSON strings or integers), or text ids in text pools."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

from fastapi.exceptions import RequestValidationError

from synelo.schemas import STEAM_ID_MAX, STEAM_ID_MIN, TEXT_ID_MAX
from synelo.schemas.fields import DOT_SEGMENTS

Loc = tuple[str | int, ...]


def invalid(
    loc: Loc, msg: str, kind: str = "value_error", value: Any = None
) -> RequestValidationError:
    """A 422 in FastAPI's own error format, naming the field."""
    return RequestValidationError([{"loc": loc, "msg": msg, "type": kind, "input": value}])


def normalize_id(value: object, player_ids: str, loc: Loc) -> str:
    """The canonical string form of a player id, or a 422 naming `loc`."""
    if player_ids == "text":
        if not isinstance(value, str):
            raise invalid(loc, "a player id in a text pool must be a string", value=value)
        if not (1 <= len(value) <= TEXT_ID_MAX) or not all(" " <= ch <= "~" for ch in value):
            raise invalid(
                loc, f"a text player id is 1–{TEXT_ID_MAX} printable ASCII characters", value=value
            )
        if value in DOT_SEGMENTS:  # see schemas.fields.addressable
            raise invalid(loc, "'.' and '..' cannot be ids: a URL's path cannot hold them")
        return value
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise invalid(loc, "a SteamID64 is a JSON string or integer", value=value)
    if isinstance(value, str):
        if len(value) != 17 or not value.isascii() or not value.isdigit():
            raise invalid(loc, "a SteamID64 has exactly 17 digits", value=value)
        number = int(value)
    else:
        number = value
    if not STEAM_ID_MIN <= number <= STEAM_ID_MAX:
        raise invalid(
            loc, f"not an individual SteamID64 ({STEAM_ID_MIN}…{STEAM_ID_MAX})", value=value
        )
    return str(number)


def _canonical_steam_string(value: object) -> TypeGuard[str]:
    """Whether `value` is already a SteamID64 in canonical form: a str of 17 ASCII digits in
    range. Equal-length digit strings compare like their numbers, so no int is made."""
    return (
        type(value) is str
        and len(value) == 17
        and value.isascii()
        and value.isdigit()
        and _STEAM_ID_MIN_TEXT <= value <= _STEAM_ID_MAX_TEXT
    )


_STEAM_ID_MIN_TEXT, _STEAM_ID_MAX_TEXT = str(STEAM_ID_MIN), str(STEAM_ID_MAX)


def normalize_ids(
    values: Sequence[object], player_ids: str, loc: Loc, seen: dict[str, Loc] | None = None
) -> tuple[str, ...]:
    """Normalise a roster; a player listed twice (here or in `seen`) is a 422. Ids already
    in canonical form (a round's usual 24 strings) take a short path."""
    seen = {} if seen is None else seen
    out: list[str] = []
    steam = player_ids == "steam"
    for i, value in enumerate(values):
        key: str
        if steam and _canonical_steam_string(value):
            key = value
        else:
            key = normalize_id(value, player_ids, (*loc, i))
        if key in seen:
            raise invalid(
                (*loc, i),
                f"player {key} is listed twice (also at {_dotted(seen[key])})",
                value=value,
            )
        seen[key] = (*loc, i)
        out.append(key)
    return tuple(out)


def _dotted(loc: Iterable[str | int]) -> str:
    return ".".join(str(p) for p in loc)


_STEAM2 = re.compile(r"^STEAM_[0-5]:([01]):(\d{1,10})$", re.IGNORECASE)
_STEAM3 = re.compile(r"^\[U:1:(\d{1,10})\]$", re.IGNORECASE)
_INDIVIDUAL_BASE = STEAM_ID_MIN - 1  # the SteamID64 of account number 0


def steam64_of(text: str) -> str | None:
    """The SteamID64 that a Steam2 (`STEAM_0:1:23`) or Steam3 (`[U:1:47]`) id names, as
    players copy them from a game's console; None for any other text. A search on a
    leaderboard takes either form."""
    text = text.strip()
    if found := _STEAM2.match(text):
        account = int(found.group(2)) * 2 + int(found.group(1))
    elif found := _STEAM3.match(text):
        account = int(found.group(1))
    else:
        return None
    number = _INDIVIDUAL_BASE + account
    return str(number) if STEAM_ID_MIN <= number <= STEAM_ID_MAX else None
