"""The building blocks of the wire format: the limits, the text a store can keep, a
player id, a finite number, and the constrained strings the request bodies share."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, Field, Strict, StrictInt, WithJsonSchema

MAX_SIDE = 64
POOL_NAME = r"^[A-Za-z0-9_.-]{1,64}$"  # in paths as well, so no other text reaches a query
MAX_LABEL = 64  # a map, mode, side or position name
MAX_NAME = 64  # a player's display name
MAX_DURATION = 7 * 86_400.0  # seconds: no round lasts a week


def storable(value: str) -> str:
    """Text that both databases store alike, else a ValueError (a 422 naming the field):
    PostgreSQL refuses a NUL in text, and an unpaired surrogate ("\\udc00", which JSON can
    spell) is not UTF-8, so neither database can store it."""
    if "\x00" in value:
        raise ValueError("must not contain a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must not contain an unpaired surrogate (it is not UTF-8)") from None
    return value


Text = Annotated[str, Strict(), AfterValidator(storable)]  # a JSON string the store can keep


def in_utc_range(moment: datetime) -> datetime:
    """`moment` in UTC, as the store keeps it, else a ValueError (a 422 naming the field):
    9999-12-31T23:59:59-14:00 is a valid time with a zone, but in UTC it falls past year
    9999, which no datetime holds (the conversion raised OverflowError, a 500)."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside 0001-01-01…9999-12-31 once converted to UTC") from None


# a time with its zone (ISO 8601), in UTC once read
Moment = Annotated[AwareDatetime, AfterValidator(in_utc_range)]
ROUND_ID_MAX = 128
DOT_SEGMENTS = (".", "..")  # a URL's path cannot hold these as a segment, even as %2E


def addressable(value: str) -> str:
    """An id that a URL's path segment can hold, else a ValueError: `.` and `..` are
    removed from a path by every browser and HTTP client (RFC 3986 §5.2.4, and the WHATWG
    URL standard, which removes `%2E` and `%2e%2E` alike), so a round or player of that id
    would be stored and never reached."""
    if value in DOT_SEGMENTS:
        raise ValueError("'.' and '..' cannot be ids: a URL's path cannot hold them")
    return value


# a report's round id: any text the store keeps, but `.` and `..`
RoundId = Annotated[
    Text,
    Field(min_length=1, max_length=ROUND_ID_MAX),
    AfterValidator(addressable),
]
SERVER_ID_MAX = 128
# a report's server id: the server page's path segment, so not `.` or `..` either
ServerId = Annotated[
    Text,
    Field(min_length=1, max_length=SERVER_ID_MAX),
    AfterValidator(addressable),
]
STEAM_ID_MIN = 76561197960265729  # account number 1, individual, public universe
STEAM_ID_MAX = 76561202255233023  # account number 2^32 − 1
TEXT_ID_MAX = 64
# A player id, checked against the pool's id kind by synelo.service.ids (the schema states
# the same rules): a SteamID64 as a JSON string of 17 digits or as an integer, in steam pools;
# 1–64 printable ASCII characters in text pools, which take strings only.
PlayerId = (
    Annotated[
        Text,
        WithJsonSchema(
            {
                "type": "string",
                "pattern": f"^[ -~]{{1,{TEXT_ID_MAX}}}$",
                "description": "a SteamID64 of 17 digits in "
                f"{STEAM_ID_MIN}…{STEAM_ID_MAX} (steam pools), or 1–{TEXT_ID_MAX} printable "
                "ASCII characters but '.' and '..' (text pools)",
            }
        ),
    ]
    | Annotated[
        StrictInt,
        WithJsonSchema(
            {
                # no minimum/maximum: OpenAPI's numbers are floats, which cannot hold these
                # bounds exactly (the nearest are off by one, outside the range)
                "type": "integer",
                "format": "int64",
                "description": f"a SteamID64 in {STEAM_ID_MIN}…{STEAM_ID_MAX} (steam pools "
                "only; JSON parsers that read numbers as doubles lose its last digits, so "
                "the string form is safer)",
            }
        ),
    ]
)
Number = Annotated[float, Strict(), Field(allow_inf_nan=False)]  # a JSON number, not "60"


Label = Annotated[Text, Field(min_length=1, max_length=MAX_LABEL)]  # a position, a side
DisplayName = Annotated[Text, Field(min_length=1, max_length=MAX_NAME)]


Reason = Annotated[
    Text, Field(min_length=1, max_length=500, description="why, kept in the pool's admin log")
]
