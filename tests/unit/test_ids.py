"""Player ids: the roster's short path for canonical SteamID64 strings agrees with the full
check on every input, accepted or refused."""

from __future__ import annotations

import pytest
from fastapi.exceptions import RequestValidationError
from hypothesis import given
from hypothesis import strategies as st

from synelo.service.ids import STEAM_ID_MAX, STEAM_ID_MIN, normalize_id, normalize_ids

near_bounds = st.sampled_from(
    [
        STEAM_ID_MIN - 1,
        STEAM_ID_MIN,
        STEAM_ID_MAX,
        STEAM_ID_MAX + 1,
        10**16,
        10**17 - 1,
        10**17,
        99999999999999999,
    ]
)
numbers = st.integers(STEAM_ID_MIN - 10**6, STEAM_ID_MAX + 10**6) | near_bounds
ids = (
    numbers.map(str)
    | numbers
    | st.text(max_size=20)
    | numbers.map(lambda n: f"0{n}"[:17])
    | numbers.map(lambda n: f" {n}")
    | st.sampled_from(
        [
            "７６５６１１９７９６０２６５７２９",
            "76561197960265729\n",
            True,
            "7656119796026572٩",
            "765611979602657٢9",
        ]
    )
)


def outcome(call):  # type: ignore[no-untyped-def]
    try:
        return "ok", call()
    except RequestValidationError as exc:
        return "422", exc.errors()[0]["loc"]


@given(st.lists(ids, max_size=6))
def test_roster_agrees_with_one_by_one(values: list[object]) -> None:
    loc = ("body", "teams", "A")

    def one_by_one() -> tuple[str, ...]:
        seen: set[str] = set()
        out = []
        for i, v in enumerate(values):
            key = normalize_id(v, "steam", (*loc, i))
            if key in seen:
                raise RequestValidationError([{"loc": (*loc, i)}])
            seen.add(key)
            out.append(key)
        return tuple(out)

    assert outcome(lambda: normalize_ids(values, "steam", loc)) == outcome(one_by_one)


@pytest.mark.parametrize(
    "value, key",
    [
        ("76561197960265729", "76561197960265729"),
        (76561197960265729, "76561197960265729"),
        ("76561202255233023", "76561202255233023"),
    ],
)
def test_accepted_forms(value: object, key: str) -> None:
    assert normalize_ids([value], "steam", ("x",)) == (key,)


@pytest.mark.parametrize(
    "value",
    [
        "76561197960265728",
        "76561202255233024",
        "7656119796026572",
        "765611979602657290",
        "７６５６１１９７９６０２６５７２９",
        "7656119796026572٩",
    ],
)
def test_refused_forms(value: object) -> None:
    with pytest.raises(RequestValidationError):
        normalize_ids([value], "steam", ("x",))
