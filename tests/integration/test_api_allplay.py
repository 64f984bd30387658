"""All-play splits (W12) and the all-play odd joiner over real HTTP, on SQLite and PostgreSQL:
for whr pools whose rounds were uneven, every answer is checked against the model's own
logit, brute-forced over every split; for models without a logit (SynElo, Elo, TrueSkill),
against the least |Σ_A − Σ_B|, brute-forced too."""

from __future__ import annotations

import itertools
import random
import time
import uuid
from typing import Any

import httpx
import pytest

from synelo.balance import place_joiner
from synelo.client import SyneloClient
from synelo.models import RoundFacts
from synelo.models import create_model as service_model
from tests.conftest import LOADED, SERVER, LiveServer, steam

PLAYERS = [steam(n) for n in range(201, 210)]


class Rated:
    """A whr pool rated over HTTP, with the same rounds rated here by the model itself."""

    def __init__(self, admin: httpx.Client, server: httpx.Client, **params: Any) -> None:
        self.name = f"w{uuid.uuid4().hex[:12]}"
        body = {"name": self.name, "team_size": 8, "model": "whr", "params": params}
        r = admin.post("/v1/pools", json=body)
        assert r.status_code == 201, r.text
        self.model = service_model("whr", params)
        self.states: dict[str, Any] = {}
        self.context: dict[str, Any] = {}
        rng = random.Random(11)
        for i in range(40):  # 2v3 and 3v4 either way round; the larger side wins more often
            small = rng.choice((2, 3))
            picked = rng.sample(PLAYERS, 2 * small + 1)
            teams = [picked[:small], picked[small:]]
            if i % 2:
                teams.reverse()
            larger = "A" if len(teams[0]) > small else "B"
            smaller = "B" if larger == "A" else "A"
            winner = larger if rng.random() < 0.7 else smaller
            report = {
                "round_id": f"u{i}",
                "server_id": "s1",
                "winner": winner,
                "teams": {"A": teams[0], "B": teams[1]},
            }
            r = server.post(f"/v1/pools/{self.name}/rounds", json=report)
            assert r.status_code == 201, r.text
            rated = self.model.rate(
                self.states,
                # the service dates them by their arrival: all on one day, as here
                RoundFacts(tuple(teams[0]), tuple(teams[1]), winner, extras={"day": 0}),
                self.context,
            )
            assert r.json()["p_a"] == rated.p_a
            self.states.update(rated.states)
            self.context.update(rated.context)

    def set(self, admin: httpx.Client, player: str, rating: int) -> None:
        """An admin's set, here and on the pool."""
        r = admin.put(f"/v1/pools/{self.name}/players/{player}", json={"rating": rating})
        assert r.status_code == 200, r.text
        self.states[player] = self.model.with_rating(self.states[player], rating)

    def strength(self, player: str) -> int:
        """What the solver balances: the strength in whole points, as the route rounds it."""
        return round(self.model.strength(self.model.state_of(self.states, player)))

    def strengths(self, team: list[str]) -> list[float]:
        return [self.strength(p) for p in team]

    def logit(self, team_a: list[str], team_b: list[str]) -> float:
        return self.model.split_logit(self.strengths(team_a), self.strengths(team_b), self.context)

    def least(self, players: list[str]) -> float:
        """The least |logit| over every ⌊n/2⌋ against ⌈n/2⌉ split (brute force)."""
        k = len(players) // 2
        return min(
            abs(self.logit(list(a), [p for p in players if p not in a]))
            for a in itertools.combinations(players, k)
        )

    def predict(self, team_a: list[str], team_b: list[str]) -> float:
        facts = RoundFacts(tuple(team_a), tuple(team_b), "A")
        return self.model.predict(self.states, facts, self.context)


@pytest.fixture
def whr(admin: httpx.Client, server: httpx.Client) -> Rated:
    return Rated(admin, server)


def test_a_whr_pool_splits_every_player_by_its_logit(server: httpx.Client, whr: Rated) -> None:
    # the uneven rounds taught the pool an extra-player advantage: equal means are not even
    assert whr.context["epad:2"]["mean"] != 0 and whr.context["epad:3"]["mean"] != 0
    for players, sizes in ((PLAYERS[:5], [2, 3]), (PLAYERS[:7], [3, 4]), (PLAYERS[:8], [4, 4])):
        r = server.post(f"/v1/pools/{whr.name}/splits", json={"players": players})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["mode"] == "all-play" and body["solver"] == "exact"
        (split,) = body["splits"]
        assert split["k"] == len(players) // 2 and split["bench"] == []
        assert sorted([len(split["A"]), len(split["B"])]) == sizes
        assert sorted(split["A"] + split["B"]) == sorted(players)
        assert split["p_a"] == whr.predict(split["A"], split["B"])
        assert split["logit"] == pytest.approx(whr.logit(split["A"], split["B"]), abs=1e-12)
        assert abs(split["logit"]) == pytest.approx(whr.least(players), abs=1e-12)
        assert split["optimal"] is True
        assert split["sum_a"] == sum(whr.strength(p) for p in split["A"])
        assert split["gap"] == abs(split["sum_a"] - split["sum_b"])


def test_the_epad_changes_the_split_that_equal_means_would_choose(
    server: httpx.Client, whr: Rated
) -> None:
    """A 7-player group whose best split by equal means (no epad) is not the all-play
    answer: the route follows the logit with the epad."""
    for players in itertools.combinations(PLAYERS, 7):
        group = list(players)
        splits = [
            (list(a), [p for p in group if p not in a]) for a in itertools.combinations(group, 3)
        ]
        plain = min(splits, key=lambda s: abs(whr.model.split_logit(*map(whr.strengths, s), {})))
        if abs(whr.logit(*plain)) > whr.least(group) + 1e-9:
            break
    else:
        pytest.fail("the epad never changed the best split")
    r = server.post(f"/v1/pools/{whr.name}/splits", json={"players": group})
    (split,) = r.json()["splits"]
    assert {frozenset(split["A"]), frozenset(split["B"])} != {*map(frozenset, plain)}
    assert abs(split["logit"]) == pytest.approx(whr.least(group), abs=1e-12)


def test_the_mode_can_be_chosen_and_is_checked(
    live: LiveServer, server: httpx.Client, whr: Rated, pool: str
) -> None:
    players = PLAYERS[:7]
    even = server.post(f"/v1/pools/{whr.name}/splits", json={"players": players, "mode": "even"})
    assert even.status_code == 200, even.text
    assert even.json()["mode"] == "even"
    assert [s["k"] for s in even.json()["splits"]] == [2, 3]  # k v k, the bench as before
    for s in even.json()["splits"]:
        assert s["logit"] is None and s["p_a"] == whr.predict(s["A"], s["B"])
    # a SynElo pool splits all-play when asked to, by F1u's logit (a new pool's `uneven`)
    r = server.post(f"/v1/pools/{pool}/splits", json={"players": players, "mode": "all-play"})
    assert r.status_code == 200, r.text
    assert r.json()["mode"] == "all-play" and r.json()["splits"][0]["logit"] is not None
    assert server.post(f"/v1/pools/{pool}/splits", json={"players": players}).json()["mode"] == (
        "even"
    )
    # the Python client asks for either mode
    with SyneloClient(live.url, SERVER, whr.name, timeout=LOADED) as client:
        assert [s.k for s in client.splits(players, mode="even")] == [2, 3]
        (split,) = client.splits(players)
        assert split.logit is not None and split.bench == []
    # everyone plays: a max_k below ⌊n/2⌋ cannot be honoured
    r = server.post(f"/v1/pools/{whr.name}/splits", json={"players": players, "max_k": 2})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "max_k"]


def test_all_play_keeps_parties_and_counts_moves(server: httpx.Client, whr: Rated) -> None:
    players = PLAYERS[:7]
    party = [players[0], players[1]]
    current = {"A": players[:3], "B": players[3:]}
    body = {"players": players, "parties": [party], "current": current, "prefer": "stay"}
    r = server.post(f"/v1/pools/{whr.name}/splits", json=body)
    assert r.status_code == 200, r.text
    (split,) = r.json()["splits"]
    assert set(party) <= set(split["A"]) or set(party) <= set(split["B"])
    assert split["split_parties"] == []
    together = [
        a
        for a in itertools.combinations(players, 3)
        if set(party) <= set(a) or not set(party) & set(a)
    ]
    least = min(abs(whr.logit(list(a), [p for p in players if p not in a])) for a in together)
    assert abs(split["logit"]) == pytest.approx(least, abs=1e-12)
    moved = len(set(current["A"]) - set(split["A"])) + len(set(current["B"]) - set(split["B"]))
    assert split["moved"] == moved and split["moved_optimal"] is True


def test_a_bpst_pool_is_enumerated_and_proven(admin: httpx.Client, server: httpx.Client) -> None:
    bpst = Rated(admin, server, epad="bpst")
    players = PLAYERS[:7]
    r = server.post(f"/v1/pools/{bpst.name}/splits", json={"players": players})
    assert r.status_code == 200, r.text
    (split,) = r.json()["splits"]
    assert split["optimal"] is True
    assert abs(split["logit"]) == pytest.approx(bpst.least(players), abs=1e-12)
    assert split["p_a"] == bpst.predict(split["A"], split["B"])


def test_the_odd_joiner_goes_where_the_logit_is_least(
    admin: httpx.Client, server: httpx.Client, whr: Rated
) -> None:
    """Equal teams of two and a joiner: the side of the least |logit| with the joiner (the
    epad included), checked on cases where the sums would choose the other side too."""
    for player, rating in zip(PLAYERS, range(2400, 500, -220), strict=True):
        whr.set(admin, player, rating)  # ratings far apart: means and sums often disagree
    cases: dict[bool, list[tuple[list[str], list[str], str, str]]] = {True: [], False: []}
    for a, b, c, d, joiner in itertools.permutations(PLAYERS, 5):
        if a > b or c > d or a > c:
            continue
        on_a = abs(whr.logit([a, b, joiner], [c, d]))
        on_b = abs(whr.logit([a, b], [c, d, joiner]))
        if abs(on_a - on_b) < 1e-9:
            continue  # a tie (equal sums): the lower sum, then A, as by sums
        side = "A" if on_a < on_b else "B"
        by_sums = place_joiner(whr.strengths([a, b, c, d, joiner]), [0, 1], [2, 3], 4)
        cases[by_sums != side].append(([a, b], [c, d], joiner, side))
    assert cases[True], "the sums and the logit never disagree in this pool"
    for team_a, team_b, joiner, side in cases[True][:4] + cases[False][:4]:
        body = {"teams": {"A": team_a, "B": team_b}, "joiner": joiner}
        r = server.post(f"/v1/pools/{whr.name}/autobalance", json=body)
        assert r.status_code == 200, r.text
        assert r.json()["moves"][0] == {"steam_id": joiner, "from": "none", "to": side}


def sums_pool(
    admin: httpx.Client, model: str, ratings: dict[str, int], uneven: str = "sums"
) -> str:
    """A pool of a model without a split logit (SynElo with the seed's sums), its players set
    to these ratings by an admin (SynElo's rating, Elo's: the strength the splits balance);
    `uneven` "headcount": a SynElo pool that has one (F1u)."""
    name = f"s{uuid.uuid4().hex[:12]}"
    body: dict[str, Any] = {"name": name, "team_size": 64, "model": model}
    if model == "synelo":
        body["params"] = {"uneven": uneven}
    r = admin.post("/v1/pools", json=body)
    assert r.status_code == 201, r.text
    for player, rating in ratings.items():
        r = admin.put(f"/v1/pools/{name}/players/{player}", json={"rating": rating})
        assert r.status_code == 200, r.text
    return name


def least_gap(ratings: dict[str, int], players: list[str], parties: list[list[str]]) -> int:
    """The least |Σ_A − Σ_B| over every ⌊n/2⌋ against ⌈n/2⌉ split, parties whole."""
    best = None
    for small in itertools.combinations(players, len(players) // 2):
        if any(0 < len(set(p) & set(small)) < len(p) for p in parties):
            continue
        gap = abs(2 * sum(ratings[p] for p in small) - sum(ratings[p] for p in players))
        best = gap if best is None else min(best, gap)
    assert best is not None
    return best


@pytest.mark.parametrize("model", ["synelo", "elo"])
def test_a_model_without_a_logit_splits_every_player_by_sums(
    live: LiveServer, admin: httpx.Client, server: httpx.Client, model: str
) -> None:
    """The plugin's request outside arena: everyone, with parties and the present teams; the
    one split it applies is ⌊n/2⌋ against ⌈n/2⌉, nobody benched, the least gap proven."""
    rng = random.Random(model)
    ratings = {p: round(rng.gauss(1500, 350)) for p in PLAYERS + [steam(n) for n in (210, 211)]}
    name = sums_pool(admin, model, ratings)
    everyone = list(ratings)
    for n in (4, 5, 8, 9, 11):
        players = everyone[:n]
        parties = [players[:2]] + ([players[4:7]] if n >= 9 else [])
        current = {"A": players[: n // 2], "B": players[n // 2 :]}
        body = {
            "players": players,
            "mode": "all-play",
            "parties": parties,
            "current": current,
            "prefer": "stay",
        }
        r = server.post(f"/v1/pools/{name}/splits", json=body)
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["mode"] == "all-play" and out["solver"] == "exact"
        (split,) = out["splits"]
        assert split["k"] == n // 2 and split["bench"] == [] and split["logit"] is None
        assert sorted([len(split["A"]), len(split["B"])]) == [n // 2, n - n // 2]
        assert sorted(split["A"] + split["B"]) == sorted(players)
        for party in parties:
            assert set(party) <= set(split["A"]) or set(party) <= set(split["B"])
        assert split["sum_a"] == sum(ratings[p] for p in split["A"])
        assert split["sum_b"] == sum(ratings[p] for p in split["B"])
        assert split["gap"] == abs(split["sum_a"] - split["sum_b"])
        assert split["gap"] == least_gap(ratings, players, parties)
        assert split["optimal"] is True and split["moved_optimal"] is True
        moved = len(set(current["A"]) - set(split["A"])) + len(set(current["B"]) - set(split["B"]))
        assert split["moved"] == moved
    # the Python client reads the same answer
    with SyneloClient(live.url, SERVER, name, timeout=LOADED) as client:
        (split,) = client.splits(everyone[:7], mode="all-play")
        assert split.k == 3 and split.bench == [] and split.logit is None
        assert split.gap == least_gap(ratings, everyone[:7], []) and split.optimal


def test_a_headcount_synelo_pool_splits_every_player_by_f1u(
    admin: httpx.Client, server: httpx.Client
) -> None:
    """A new SynElo pool predicts k + 1 against k by F1u, so its all-play split is the least
    |logit| of F1u (W12 on its line), not F1's least sum gap: the balancer and the
    prediction agree."""
    rng = random.Random("headcount")
    ratings = {p: round(rng.gauss(1500, 350)) for p in PLAYERS + [steam(n) for n in (210, 211)]}
    name = sums_pool(admin, "synelo", ratings, uneven="headcount")
    model = service_model("synelo", {"theta": 100.0 * 64, "uneven": "headcount"})
    everyone = list(ratings)
    for n in (5, 9, 11):
        players = everyone[:n]
        r = server.post(f"/v1/pools/{name}/splits", json={"players": players, "mode": "all-play"})
        assert r.status_code == 200, r.text
        (split,) = r.json()["splits"]
        assert split["bench"] == [] and split["optimal"] is True
        logit = model.split_logit(
            [float(ratings[p]) for p in split["A"]], [float(ratings[p]) for p in split["B"]], {}
        )
        assert split["logit"] == pytest.approx(logit, abs=1e-9)
        least = min(
            abs(
                model.split_logit(
                    [float(ratings[p]) for p in small],
                    [float(ratings[p]) for p in players if p not in small],
                    {},
                )
            )
            for small in itertools.combinations(players, n // 2)
        )
        assert abs(logit) == pytest.approx(least, abs=1e-9)
        # and F1's least sum gap is another split here: the rule changed what is chosen
        if n == 11:
            assert split["gap"] != least_gap(ratings, players, [])


def test_a_trueskill_pool_splits_all_play_by_its_strengths(
    server: httpx.Client, admin: httpx.Client
) -> None:
    """TrueSkill balances μ (its strength): the all-play split of an even count is the even
    split of everyone, and an odd count is proven too."""
    name = f"s{uuid.uuid4().hex[:12]}"
    r = admin.post("/v1/pools", json={"name": name, "team_size": 8, "model": "trueskill"})
    assert r.status_code == 201, r.text
    rng = random.Random(4)
    for i in range(30):
        picked = rng.sample(PLAYERS, 6)
        report = {
            "round_id": f"t{i}",
            "server_id": "s1",
            "winner": "A" if min(picked[:3]) < min(picked[3:]) else "B",
            "teams": {"A": picked[:3], "B": picked[3:]},
        }
        assert server.post(f"/v1/pools/{name}/rounds", json=report).status_code == 201
    players = PLAYERS[:8]
    all_play = server.post(
        f"/v1/pools/{name}/splits", json={"players": players, "mode": "all-play"}
    ).json()["splits"][0]
    even = server.post(
        f"/v1/pools/{name}/splits", json={"players": players, "min_k": 4, "must_play": players}
    ).json()["splits"][0]
    assert all_play["k"] == 4 and all_play["logit"] is None and all_play["optimal"]
    assert all_play["gap"] == even["gap"] and all_play["p_a"] == pytest.approx(even["p_a"])
    r = server.post(f"/v1/pools/{name}/splits", json={"players": PLAYERS, "mode": "all-play"})
    (split,) = r.json()["splits"]
    assert split["k"] == 4 and len(split["A"] + split["B"]) == 9 and split["optimal"]


def test_a_full_server_is_split_within_the_budget(
    live: LiveServer, admin: httpx.Client, server: httpx.Client
) -> None:
    """101 players (SourceMod 1.12's largest server), with parties and the present teams:
    answered within SYNELO_BALANCE_BUDGET_MS and proven (the gap meets the parity bound)."""
    rng = random.Random(101)
    players = [steam(n) for n in range(1001, 1102)]
    ratings = {p: round(rng.gauss(1500, 350)) for p in players}
    name = sums_pool(admin, "synelo", ratings)
    parties = [players[i : i + 3] for i in range(0, 30, 3)] + [players[40:45]]
    body = {
        "players": players,
        "mode": "all-play",
        "parties": parties,
        "current": {"A": players[::2], "B": players[1::2]},
        "prefer": "stay",
    }
    began = time.perf_counter()
    r = server.post(f"/v1/pools/{name}/splits", json=body)
    took_ms = (time.perf_counter() - began) * 1000
    assert r.status_code == 200, r.text
    out = r.json()
    (split,) = out["splits"]
    budget = live.settings.balance_budget_ms
    assert out["elapsed_ms"] < budget and took_ms < 2 * budget
    assert split["k"] == 50 and split["bench"] == []
    assert sorted([len(split["A"]), len(split["B"])]) == [50, 51]
    for party in parties:
        assert set(party) <= set(split["A"]) or set(party) <= set(split["B"])
    assert split["gap"] == sum(ratings.values()) % 2 and split["optimal"] is True
    assert out["solver"] == "exact"


@pytest.mark.parametrize(("uneven", "side"), [("headcount", "B"), ("sums", "A")])
def test_a_synelo_pools_odd_joiner_goes_where_its_own_f1_says(
    admin: httpx.Client, server: httpx.Client, uneven: str, side: str
) -> None:
    """6 against 6, A five 1500s and a 1450, B six 1500s, a 1000 joiner, Θ 600 (6v6). The
    seed's sums put the joiner on A (|−50 + 1000| = 950 < 1,050); F1u, which a headcount
    pool predicts by, on B: on A, (9,950 − 7·9,000/6)/600 + ln(7/6) = −0.763; on B,
    (7·8,950/6 − 10,000)/600 − ln(7/6) = +0.582. F11's transfer at 8 against 5 likewise
    follows the pool's own F1 (tests/unit/test_balance_autobalance.py)."""
    name = f"j{uuid.uuid4().hex[:12]}"
    r = admin.post(
        "/v1/pools",
        json={"name": name, "team_size": 6, "model": "synelo", "params": {"uneven": uneven}},
    )
    assert r.status_code == 201, r.text
    team_a, team_b = [steam(n) for n in range(300, 306)], [steam(n) for n in range(310, 316)]
    joiner = steam(320)
    ratings = {p: 1500 for p in team_a + team_b} | {team_a[-1]: 1450, joiner: 1000}
    for player, rating in ratings.items():
        r = admin.put(f"/v1/pools/{name}/players/{player}", json={"rating": rating})
        assert r.status_code == 200, r.text
    body = {"teams": {"A": team_a, "B": team_b}, "joiner": joiner}
    r = server.post(f"/v1/pools/{name}/autobalance", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["moves"][0] == {"steam_id": joiner, "from": "none", "to": side}
