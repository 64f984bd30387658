"""The models of the replay: each baseline adapter against its package's documented example,
`synelo` against the service's own rating code, the registry, and each model's declared
scalings (parameters that only matter through their ratios) against its predictions."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from typing import Any

import pytest
import trueskill
from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

from synelo.evaluation.adapters import HistoryInfo, ModelReplay, create_replay, parse_options
from synelo.evaluation.history import Match, Winner
from synelo.models import MODELS, Model, Rated, RoundFacts, Scaling, register
from synelo.models.base import NO_CONTEXT
from synelo.ratings import SynEloParams
from tests.service_reference import rate_like_the_service

README_MATCH = Match("readme", ("a", "b"), ("x", "y"), "A")
# the packages' own defaults: the service's models use them times 60 (FAForever's scale)
PACKAGE = {"mu": 25.0, "sigma": 25.0 / 3.0, "beta": 25.0 / 6.0, "tau": 25.0 / 300.0}


def test_openskill_pl_reproduces_the_readme_example() -> None:
    """openskill's README: 2v2 of new players, [a, b] beat [x, y]:
    a = PlackettLuceRating(mu=26.964294621803063, sigma=8.177962604389991),
    x = PlackettLuceRating(mu=23.035705378196937, sigma=8.177962604389991), a == b, x == y."""
    model = create_replay("openskill-pl", PACKAGE)
    assert model.step(README_MATCH) == pytest.approx(0.5)
    a, b, x, y = (model.rating_of(p) for p in "abxy")  # type: ignore[attr-defined]
    assert (a.mu, a.sigma) == pytest.approx((26.964294621803063, 8.177962604389991), abs=1e-12)
    assert (x.mu, x.sigma) == pytest.approx((23.035705378196937, 8.177962604389991), abs=1e-12)
    assert (a.mu, a.sigma) == (b.mu, b.sigma) and (x.mu, x.sigma) == (y.mu, y.sigma)


@pytest.mark.parametrize(
    ("name", "package_model"),
    [
        ("openskill-pl", PlackettLuce),
        ("openskill-bt", BradleyTerryFull),
        ("openskill-tm", ThurstoneMostellerFull),
    ],
)
def test_openskill_adapters_are_the_package_as_documented(name: str, package_model: Any) -> None:
    """The README's example run through each adapter gives what the package itself gives
    (rate with the first team winning, predict_win) — for BT and TM, which the README does
    not show, this is the check that the adapter feeds the package as documented."""
    direct = package_model()
    r = direct.rating
    teams = [[r(), r()], [r(), r()]]
    expected_p = direct.predict_win(teams)[0]
    [[a, b], [x, y]] = direct.rate(teams)
    model = create_replay(name, PACKAGE)
    assert model.step(README_MATCH) == expected_p
    got = [model.rating_of(p) for p in "abxy"]  # type: ignore[attr-defined]
    assert [(g.mu, g.sigma) for g in got] == [(q.mu, q.sigma) for q in (a, b, x, y)]
    assert a.mu > 25 > x.mu  # the winners went up
    # B winning mirrors A winning; a draw between equals moves no mean
    mirrored = create_replay(name, PACKAGE)
    mirrored.step(Match("m", ("a", "b"), ("x", "y"), "B"))
    assert mirrored.ratings()["x"] == pytest.approx(a.mu, abs=1e-9)
    drawn = create_replay(name, PACKAGE)
    drawn.step(Match("d", ("a", "b"), ("x", "y"), "draw"))
    assert drawn.ratings()["a"] == pytest.approx(25.0, abs=1e-9)


def test_trueskill_reproduces_the_documented_example() -> None:
    """trueskill.org: rate_1vs1(Rating(), Rating()) → (mu=29.396, sigma=7.171),
    (mu=20.604, sigma=7.171); drawn → both (mu=25.000, sigma=6.458)."""
    model = create_replay("trueskill", PACKAGE)
    assert model.step(Match("1", ("1P",), ("2P",), "A")) == pytest.approx(0.5)
    one, two = model.rating_of("1P"), model.rating_of("2P")  # type: ignore[attr-defined]
    assert (round(one.mu, 3), round(one.sigma, 3)) == (29.396, 7.171)
    assert (round(two.mu, 3), round(two.sigma, 3)) == (20.604, 7.171)
    drawn = create_replay("trueskill", PACKAGE)
    drawn.step(Match("1", ("1P",), ("2P",), "draw"))
    one = drawn.rating_of("1P")  # type: ignore[attr-defined]
    assert (round(one.mu, 3), round(one.sigma, 3)) == (25.0, 6.458)
    # and it is the package's own rate_1vs1
    won, lost = trueskill.rate_1vs1(trueskill.Rating(), trueskill.Rating())
    assert (model.rating_of("1P").mu, model.rating_of("2P").mu) == (won.mu, lost.mu)  # type: ignore[attr-defined]


def test_trueskill_win_probability_formula() -> None:
    """README example's players: Alice μ 25, Bob μ 30, σ 25/3 each, β 25/6:
    P(Alice) = Φ(−5 / sqrt(2·β² + 2·σ²))."""
    model = create_replay("trueskill", PACKAGE)
    alice, bob = trueskill.Rating(25), trueskill.Rating(30)
    sigma, beta = 25 / 3, 25 / 6
    z = -5 / math.sqrt(2 * beta**2 + 2 * sigma**2)
    expected = 0.5 * (1 + math.erf(z / math.sqrt(2)))
    # trueskill's own cdf is an erfc approximation good to ~1e-9
    assert model.model.win_probability([alice], [bob]) == pytest.approx(expected, abs=1e-8)  # type: ignore[attr-defined]
    assert expected < 0.5


def test_synelo_model_is_the_service_code() -> None:
    """The replay's synelo gives the ratings of rate_round + apply_change, the functions the
    service's store calls, with Θ = 100·max(k, 2) from the largest team so far (2v2: 200)."""
    matches = [
        Match(
            str(i),
            (f"p{i % 5}", f"p{(i + 1) % 5}"),
            (f"p{(i + 2) % 5}", "q"),
            "ABdraw"[i % 3] if i % 3 < 2 else "draw",
        )
        for i in range(40)
    ]
    model = create_replay("synelo", {}, HistoryInfo(max_team_size=2))
    # the replay's default F3, with its K_min
    params = SynEloParams(theta=200.0, convergence="revised", k_min=12.0)
    expected_p, records, _ = rate_like_the_service(matches, params)
    assert [model.step(m) for m in matches] == expected_p
    assert model.parameters()["theta"] == 200.0
    assert model.ratings() == {p: rec.rating for p, rec in records.items()}
    assert len(set(model.ratings().values())) > 1


def test_synelo_default_theta_never_looks_ahead() -> None:
    """A 1v1 played before any 3v3 is predicted at Θ 200, whatever comes later; from the
    first 3v3 on, Θ is 300. A header's team_size fixes Θ from the start."""
    duel = Match("1", ("a",), ("b",), "A")
    trio = Match("2", ("a", "c", "d"), ("b", "e", "f"), "B")
    model = create_replay("synelo", {}, HistoryInfo(max_team_size=3))
    model.step(duel)
    assert model.parameters()["theta"] == 200.0  # the 3v3 to come does not count yet
    # a rating gap of 36 + 36 = 72 at Θ 200: P_A = 1/(1 + e^(−72/200))
    assert model.predict(Match("3", ("a",), ("b",), "A")) == pytest.approx(
        1 / (1 + math.exp(-72 / 200))
    )
    model.step(trio)
    assert model.parameters()["theta"] == 300.0
    fixed = create_replay("synelo", {}, HistoryInfo(3, {"team_size": 12}))
    fixed.step(duel)
    assert fixed.parameters()["theta"] == 1200.0


def test_synelo_takes_the_header_params_and_options() -> None:
    info = HistoryInfo(3, {"params": {"theta": 1234.0, "k_max": 40.0}})
    model = create_replay("synelo", {"k_max": 50.0}, info)
    assert model.parameters()["theta"] == 1234.0 and model.parameters()["k_max"] == 50.0
    # before any match: the 1v1 default, raised as larger teams play
    assert create_replay("synelo", {}, HistoryInfo(3)).parameters()["theta"] == 200.0
    with pytest.raises(ValueError):
        create_replay("synelo", {"theta": -1.0})


def test_options_are_checked() -> None:
    assert parse_options(MODELS["synelo"], {"theta": "800", "window": "100"}) == {
        "theta": 800.0,
        "window": 100,
    }
    with pytest.raises(ValueError, match="no parameter 'nonsense'"):
        parse_options(MODELS["elo"], {"nonsense": "1"})
    with pytest.raises(ValueError, match="not a number"):
        parse_options(MODELS["elo"], {"k": "lots"})
    with pytest.raises(ValueError, match="unknown model"):
        create_replay("glicko")


def test_the_registry_names_each_model_by_its_own_name() -> None:
    """The registry imports a built-in model by a path from its table: each path leads to the
    class of that name, in the order the service lists them."""
    assert [model.name for model in MODELS.values()] == list(MODELS)
    assert list(MODELS)[:3] == ["synelo", "elo", "trueskill"]


def test_a_new_model_plugs_in_as_one_class() -> None:
    class Coin(Model[float]):
        name = "coin-test"
        summary = "always 0.5"

        def new_state(self) -> float:
            return 0.0

        def predict(
            self, states: Mapping[str, float], round: RoundFacts, context: Any = NO_CONTEXT
        ) -> float:
            return 0.5

        def rate(
            self, states: Mapping[str, float], round: RoundFacts, context: Any = NO_CONTEXT
        ) -> Rated[float]:
            return Rated(0.5, {})

        def rating(self, state: float) -> float:
            return state

        def with_rating(self, state: float, rating: float) -> float:
            return rating

        def encode(self, state: float) -> dict[str, Any]:
            return {}

        def decode(self, data: Mapping[str, Any]) -> float:
            return 0.0

    register(Coin)
    try:
        from synelo.evaluation.replay import replay

        result = replay(create_replay("coin-test"), [README_MATCH, README_MATCH])
        assert result.overall.brier == 0.25 and result.overall.accuracy == 0.5
        with pytest.raises(ValueError, match="registered already"):
            register(Coin)
    finally:
        MODELS.pop("coin-test")


def random_history(sides: tuple[int, ...], n: int = 300, seed: int = 3) -> list[Match]:
    """n matches of 12 players, each side's size drawn from `sides`, about 10 % draws."""
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(12)]
    out = []
    for i in range(n):
        rng.shuffle(players)
        a, b = rng.choice(sides), rng.choice(sides)
        winner: Winner = "draw" if rng.random() < 0.1 else rng.choice(("A", "A", "B"))
        out.append(Match(str(i), tuple(players[:a]), tuple(players[a : a + b]), winner))
    return out


EQUAL = random_history((3,))
UNEQUAL = random_history((2, 3))
assert any(len(m.team_a) != len(m.team_b) for m in UNEQUAL)


def predictions(name: str, options: dict[str, float], history: list[Match]) -> list[float]:
    model = create_replay(name, options, HistoryInfo(3))
    return [model.step(m) for m in history]


def scaled(name: str, names: tuple[str, ...], c: float) -> dict[str, float]:
    defaults = create_replay(name, {}, HistoryInfo(3)).parameters()
    return {n: defaults[n] * c for n in names}


def max_gap(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


DECLARED = [(name, s) for name, cls in sorted(MODELS.items()) for s in cls.scalings]


@pytest.mark.parametrize(("name", "scaling"), DECLARED, ids=lambda x: str(getattr(x, "names", x)))
def test_each_declared_scaling_leaves_every_prediction_unchanged(
    name: str, scaling: Scaling
) -> None:
    """What `synelo tune` relies on to hold a parameter: c·(every member) predicts the same,
    on sides of unequal size too unless the scaling says it needs equal sides."""
    history = EQUAL if scaling.equal_sides else UNEQUAL
    base = predictions(name, {}, history)
    assert len(set(base)) > 100  # the ratings move: the predictions say something
    for c in (0.3, 3.7):
        assert max_gap(base, predictions(name, scaled(name, scaling.names, c), history)) < 1e-12


def test_elo_k_and_theta_only_matter_as_k_over_theta() -> None:
    """(K, Θ) and (cK, cΘ) predict identically when sides are equal; with unequal sides r0's
    share of Σ_A − Σ_B is over Θ too, so r0 must scale along."""
    for c in (0.5, 2.0, 7.3):
        kt = scaled("elo", ("k", "theta"), c)
        assert max_gap(predictions("elo", {}, EQUAL), predictions("elo", kt, EQUAL)) < 1e-12
        assert max_gap(predictions("elo", {}, UNEQUAL), predictions("elo", kt, UNEQUAL)) > 0.01
        ktr = scaled("elo", ("k", "theta", "r0"), c)
        assert max_gap(predictions("elo", {}, UNEQUAL), predictions("elo", ktr, UNEQUAL)) < 1e-12
    # a different ratio is a different model
    other = {"k": 64.0, "theta": 400.0}
    assert max_gap(predictions("elo", {}, EQUAL), predictions("elo", other, EQUAL)) > 0.01
    assert MODELS["elo"].scalings[0] == Scaling(
        ("k", "theta"), MODELS["elo"].scalings[0].why, equal_sides=True
    )


def test_the_models_without_an_exact_scaling() -> None:
    """openskill-tm's draw margin ε is absolute, and SynElo rounds to integers, floors at
    R_min and bounds K below: scaling every scale-like parameter moves their predictions, so
    they declare none."""
    tm = ("mu", "sigma", "beta", "tau")
    assert MODELS["openskill-tm"].scalings == ()
    gap = max_gap(
        predictions("openskill-tm", {}, EQUAL),
        predictions("openskill-tm", scaled("openskill-tm", tm, 1 / 60), EQUAL),
    )
    assert gap > 1e-4
    assert MODELS["synelo"].scalings == ()
    scale_like = ("theta", "k_max", "k_min", "sigma", "r0", "r_min", "r_max")
    for c in (2, 3):
        options = {
            n: int(v) if float(v).is_integer() and n.startswith("r") else v
            for n, v in scaled("synelo", scale_like, c).items()
        }
        assert (
            max_gap(predictions("synelo", {}, EQUAL), predictions("synelo", options, EQUAL)) > 1e-4
        )


@pytest.mark.parametrize("name", ["trueskill", "openskill-pl"])
def test_the_gaussian_models_display_mu_minus_three_sigma(name: str) -> None:
    """What `synelo replay --ratings-out` writes is the display rating a pool shows (μ − 3σ),
    not the strength μ that `ratings` gives."""
    model = create_replay(name)
    rng = random.Random(3)
    for i in range(40):
        a, b = rng.sample("abcdefgh", 4)[:2], rng.sample("abcdefgh", 4)[2:]
        model.step(Match(str(i), tuple(a), tuple(b), rng.choice(["A", "B"])))
    shown, mu = model.display_ratings(), model.ratings()
    assert shown.keys() == mu.keys() and len(shown) == 8
    assert isinstance(model, ModelReplay)
    for player, state in model.states.items():
        assert shown[player] == pytest.approx(state.mu - 3.0 * state.sigma)
        assert shown[player] < mu[player]
