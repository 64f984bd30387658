"""A typed client for every endpoint of API v1 (httpx, one keep-alive connection pool)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal, TypedDict, Unpack
from urllib.parse import quote

import httpx

from synelo.client.typedefs import (
    REJECTIONS,
    TRANSIENT,
    Autobalance,
    JournalEntry,
    Player,
    PoolInfo,
    RequestRejected,
    RoundResult,
    ServiceUnavailable,
    Split,
)

Teams = tuple[Sequence[str], Sequence[str]]
Commander = str | tuple[str, float, float]  # a player, or (player, from, to): seconds from start
Played = float | tuple[float, float]  # the fraction played from the start, or (from, to) seconds


class RoundFields(TypedDict, total=False):
    """A round report's optional fields, each under its name in the API (`RoundIn`, in
    docs/api), as `round_body` and `RoundReporter.report` take them. A pair is (team A's,
    team B's); None leaves the field out. The service checks them and answers a 422
    naming the field."""

    map: str | None
    mode: str | None
    started_at: datetime | None  # with a time zone
    ended_at: datetime | None
    duration: float | None  # seconds
    sides: tuple[str, str] | None  # the side each team played, e.g. ("RED", "BLU")
    commanders: tuple[Commander, Commander] | None
    scores: tuple[int, int] | None
    time_played: Mapping[str, Played] | None
    positions: Mapping[str, str] | None
    player_scores: Mapping[str, float] | None
    names: Mapping[str, str] | None  # display names, by player id


def _pair(value: tuple[Any, Any]) -> dict[str, Any]:
    return {"A": value[0], "B": value[1]}


def _commander(value: Commander) -> str | dict[str, Any]:
    if isinstance(value, str):
        return value
    player, start, end = value
    return {"player": player, "from": start, "to": end}


def _played(value: Played) -> float | dict[str, float]:
    return {"from": value[0], "to": value[1]} if isinstance(value, tuple) else value


# how each field that is not sent as it is goes on the wire
_WIRE: dict[str, Callable[[Any], Any]] = {
    "started_at": datetime.isoformat,
    "ended_at": datetime.isoformat,
    "sides": _pair,
    "scores": _pair,
    "commanders": lambda pair: _pair((_commander(pair[0]), _commander(pair[1]))),
    "time_played": lambda played: {player: _played(v) for player, v in played.items()},
    "positions": dict,
    "player_scores": dict,
    "names": dict,
}


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's delta-seconds (RFC 9110), None when absent or not that form (an
    HTTP-date is left to the caller's own backoff)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


class SyneloClient:
    """One pool of one service. Transport failures, timeouts and 5xx raise
    `ServiceUnavailable`, as do 408 and 429 (come back later); other 4xx raise a
    `RequestRejected` subclass (never retried here)."""

    def __init__(
        self,
        url: str,
        token: str,
        pool: str = "default",
        *,
        timeout: float = 2.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.pool = pool
        self.http = httpx.Client(
            base_url=url.rstrip("/"),
            timeout=timeout,
            transport=transport,
            headers={"Authorization": f"Bearer {token}"},
            limits=httpx.Limits(max_keepalive_connections=4),
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> SyneloClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport -------------------------------------------------------------------------

    def request(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> httpx.Response:
        """One request; the response if it is a 2xx."""
        try:
            response = self.http.request(method, path, json=body, params=params)
        except httpx.TransportError as exc:  # connect/read errors and timeouts
            raise ServiceUnavailable(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 500 or response.status_code in TRANSIENT:
            raise ServiceUnavailable(
                f"{method} {path} answered {response.status_code}",
                retry_after=retry_after_seconds(response.headers.get("Retry-After")),
            )
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail")
            except ValueError:
                detail = response.text
            kind = REJECTIONS.get(response.status_code, RequestRejected)
            raise kind(response.status_code, detail, method, path)
        return response

    def _pool(self, rest: str = "") -> str:
        return f"/v1/pools/{self.pool}{rest}"

    def _player(self, steam_id: str, rest: str = "") -> str:
        """A player's path: a text id may hold '/', '%', '?' or '#', so it is encoded."""
        return self._pool(f"/players/{quote(str(steam_id), safe='')}{rest}")

    # -- game server routes (server token) -------------------------------------------------

    def health(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("GET", "/healthz").json()
        return answer

    def player(self, steam_id: str) -> Player:
        return Player.model_validate(self.request("GET", self._player(steam_id)).json())

    def lookup(self, steam_ids: Iterable[str]) -> list[Player]:
        """Many players (256 a request; longer lists are sent in pieces)."""
        ids, out = list(steam_ids), []
        for i in range(0, len(ids), 256):
            data = self.request(
                "POST", self._pool("/players/lookup"), {"steam_ids": ids[i : i + 256]}
            ).json()
            out += [Player.model_validate(p) for p in data["players"]]
        return out

    def submit_round(self, body: dict[str, Any]) -> RoundResult:
        """POST a round report as is (see `round_body`); 201 new, 200 a retry it had."""
        response = self.request("POST", self._pool("/rounds"), body)
        return RoundResult.model_validate(
            {**response.json(), "created": response.status_code == 201}
        )

    def splits(
        self,
        players: Sequence[str],
        *,
        current: Teams | None = None,
        parties: Sequence[Sequence[str]] = (),
        must_play: Sequence[str] = (),
        min_k: int = 2,
        max_k: int | None = None,
        prefer: str | None = "mix",
        mode: str | None = None,
    ) -> list[Split]:
        """The best split for every team size (k = min_k … max_k), smallest k first; for an
        all-play pool (or `mode="all-play"`, any pool) the one split of every player, ⌊n/2⌋
        (its k) against ⌈n/2⌉ with an empty bench (W12: by the model's logit, or by sums)."""
        body: dict[str, Any] = {
            "players": list(players),
            "parties": [list(p) for p in parties],
            "must_play": list(must_play),
            "min_k": min_k,
            "max_k": max_k,
            "prefer": prefer,
        }
        if current is not None:
            body["current"] = {"A": list(current[0]), "B": list(current[1])}
        if mode is not None:
            body["mode"] = mode
        data = self.request("POST", self._pool("/splits"), body).json()
        return [Split.model_validate(s) for s in data["splits"]]

    def autobalance(
        self,
        team_a: Sequence[str],
        team_b: Sequence[str],
        *,
        joiner: str | None = None,
        unassigned: Sequence[str] = (),
        locked: Sequence[str] = (),
        parties: Sequence[Sequence[str]] = (),
        method: str = "f11",
        alive: Sequence[str] = (),
    ) -> Autobalance:
        """The moves that fix uneven teams mid-round. `alive`: the players now alive (F11
        then prefers dead players when that costs at most 0.02 of P(A), the dead-first rule)."""
        return Autobalance.model_validate(
            self.request(
                "POST",
                self._pool("/autobalance"),
                {
                    "teams": {"A": list(team_a), "B": list(team_b)},
                    "joiner": joiner,
                    "unassigned": list(unassigned),
                    "locked": list(locked),
                    "alive": list(alive),
                    "parties": [list(p) for p in parties],
                    "method": method,
                },
            ).json()
        )

    # -- admin routes ----------------------------------------------------------------------

    def set_rating(self, steam_id: str, rating: int) -> Player:
        return Player.model_validate(
            self.request("PUT", self._player(steam_id), {"rating": rating}).json()
        )

    def reset_player(self, steam_id: str) -> Player:
        return Player.model_validate(self.request("DELETE", self._player(steam_id)).json())

    def history(
        self, steam_id: str, limit: int = 500, before: int | None = None
    ) -> list[JournalEntry]:
        params: dict[str, Any] = {"limit": limit}
        if before is not None:
            params["before"] = before
        data = self.request("GET", self._player(steam_id, "/history"), params=params).json()
        return [JournalEntry.model_validate(e) for e in data["entries"]]

    def full_history(self, steam_id: str) -> list[JournalEntry]:
        """The player's whole journal, newest first (5000 entries a request)."""
        out: list[JournalEntry] = []
        while True:
            page = self.history(steam_id, 5000, out[-1].id if out else None)
            out += page
            if len(page) < 5000:
                return out

    def leaderboard(self, limit: int = 100) -> list[dict[str, Any]]:
        answer = self.request("GET", self._pool("/leaderboard"), params={"limit": limit})
        players: list[dict[str, Any]] = answer.json()["players"]
        return players

    def quality(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("GET", self._pool("/quality")).json()
        return answer

    def create_pool(
        self,
        name: str,
        team_size: int | None = None,
        *,
        theta: float | None = None,
        player_ids: str = "steam",
        params: dict[str, Any] | None = None,
        autotune: dict[str, Any] | Literal["default", "off"] = "default",
    ) -> PoolInfo:
        """A new pool; `autotune`: the service's default ("default", on for most models),
        "off", or a setting."""
        body: dict[str, Any] = {
            "name": name,
            "team_size": team_size,
            "theta": theta,
            "player_ids": player_ids,
            "params": params,
        }
        if autotune != "default":
            body["autotune"] = None if autotune == "off" else autotune
        return PoolInfo.model_validate(self.request("POST", "/v1/pools", body).json())

    def pools(self) -> list[PoolInfo]:
        return [PoolInfo.model_validate(p) for p in self.request("GET", "/v1/pools").json()]

    def pool_info(self, name: str | None = None) -> PoolInfo:
        return PoolInfo.model_validate(self.request("GET", f"/v1/pools/{name or self.pool}").json())


def round_body(
    round_id: str,
    server_id: str,
    winner: str,
    teams: Teams,
    participants: Teams | None = None,
    **fields: Unpack[RoundFields],
) -> dict[str, Any]:
    """The JSON body of a round report, with the optional `fields` given (`RoundFields`);
    a name that is no field of a report is a TypeError."""
    if unknown := fields.keys() - RoundFields.__optional_keys__:
        raise TypeError(f"not a field of a round report: {', '.join(sorted(unknown))}")
    body: dict[str, Any] = {
        "round_id": round_id,
        "server_id": server_id,
        "map": fields.get("map") or "",
        "winner": winner,
        "teams": {"A": list(teams[0]), "B": list(teams[1])},
    }
    if participants is not None:
        body["participants"] = {"A": list(participants[0]), "B": list(participants[1])}
    for name, value in fields.items():
        if value is not None and name != "map":
            body[name] = _WIRE[name](value) if name in _WIRE else value
    return body
