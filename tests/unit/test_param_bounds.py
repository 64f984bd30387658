"""Every model stays finite over the whole space its parameter bounds allow.

A pool's parameters are checked once, when it is created or changed, and then used for every
round for good: a value inside the bounds that made a formula overflow or divide by zero
(σ = 1e-170 made F4's 2σ² zero) broke the pool for good (issue 16, finding 1). These
properties draw parameters anywhere inside the bounds, with their end points and values
near them drawn often, rate rounds of every shape, admin sets to the ends of the rating
range included, and require finite, storable answers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from synelo.models import MODELS, ParameterError, RoundError, create_model
from synelo.models.base import Param
from synelo.models.positional import Positional
from synelo.models.rounds import column_int
from synelo.ratings.params import ParameterError as SynEloParameterError
from synelo.service.api.pool_settings import ratable
from tests.model_rounds import POSITIONS, round_facts


def _number(spec: Param) -> st.SearchStrategy[Any]:
    low = -1e9 if spec.low is None else spec.low
    high = 1e9 if spec.high is None else spec.high
    if spec.integer:
        lo = int(low) + (1 if spec.above else 0)
        return st.one_of(st.sampled_from([lo, int(high)]), st.integers(lo, int(high)))
    ends = [high, math.nextafter(low, math.inf) if spec.above else low]
    if spec.above and low == 0:
        ends += [5e-324, 1e-300, 1e-170]  # the values the probe broke pools with
    draws: list[st.SearchStrategy[Any]] = [
        st.sampled_from(ends),
        st.floats(low, high, exclude_min=spec.above, allow_nan=False),
    ]
    if spec.log and high > 0:
        floor = max(low, 5e-324)
        draws.append(
            st.floats(math.log10(floor), math.log10(high)).map(
                lambda e: min(high, max(math.nextafter(low, math.inf), 10.0**e))
            )
        )
    return st.one_of(draws)


def _params(name: str) -> st.SearchStrategy[dict[str, Any]]:
    specs = MODELS[name].parameters
    return st.fixed_dictionaries(
        {},
        optional={
            k: st.sampled_from(p.choices)
            if p.choices
            else st.text(max_size=64)
            if p.text
            else _number(p)
            for k, p in specs.items()
        },
    )


PLAYERS = [f"p{i}" for i in range(16)]
rounds = st.lists(
    st.tuples(
        st.integers(1, 8),  # team size
        st.randoms(use_true_random=False),
        st.sampled_from(["A", "B", "draw"]),
    ),
    min_size=1,
    max_size=25,
)


def _finite(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


def _check_model(name: str, params: dict[str, Any], played: list[Any], extreme: float) -> None:
    try:
        model = create_model(name, params)
    except (ParameterError, SynEloParameterError):
        assume(False)  # refused at creation: a 422, the pool never exists
        return
    states: dict[str, Any] = {}
    names: Sequence[str] = POSITIONS
    if isinstance(model, Positional):  # positions the pool knows, one each when it asks so
        names = sorted(model.allowed) if model.allowed else [f"at{i}" for i in range(8)]
    # an admin set to the end of the rating range, where the service allows it (`settable`)
    if name == "synelo" or ratable(model, round(extreme)):
        states["p0"] = model.with_rating(model.new_state(), extreme)
    for size, rnd, winner in played:
        chosen = rnd.sample(PLAYERS, 2 * size)
        facts = round_facts(chosen[:size], chosen[size:], winner, positions=names)
        p = model.predict(states, facts)
        assert math.isfinite(p) and 0.0 <= p <= 1.0, (params, p)
        try:
            rated = model.rate(states, facts)
        except RoundError:  # a round the pool refuses (a 422): two at one position
            assume(False)
            return
        assert math.isfinite(rated.p_a) and 0.0 <= rated.p_a <= 1.0, (params, rated.p_a)
        for player, state in rated.states.items():
            rating = model.rating(state)
            assert math.isfinite(rating), (params, player, rating)
            column_int(rating)
            assert _finite(model.encode(state)), (params, model.encode(state))
            assert all(math.isfinite(v) for v in model.fields(state).values())
            assert math.isfinite(model.strength(state))
        states.update(rated.states)


@pytest.mark.parametrize("name", sorted(MODELS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_model_stays_finite_inside_its_bounds(name: str, data: st.DataObject) -> None:
    params = data.draw(_params(name), label="params")
    played = data.draw(rounds, label="rounds")
    extreme = data.draw(
        st.sampled_from([1.0, 10_000.0] if name == "synelo" else [-1e6, 1e6, 0.0, 1500.0])
    )
    _check_model(name, params, played, extreme)


def test_the_probes_sigmas_are_refused() -> None:
    """The values that broke a pool for good are out of bounds, named."""
    for sigma in (1e-170, 5e-324, 1e-200):
        try:
            create_model("synelo", {"sigma": sigma})
        except ParameterError as exc:
            assert "sigma" in str(exc)
        else:
            raise AssertionError(f"sigma={sigma} was accepted")


def test_a_gaussian_models_spread_is_bounded_by_its_noise() -> None:
    """σ or τ a million times β each lie within bounds, but together a draw's update
    divides 0 by 0: they are refused together, naming the one too wide."""
    for name in ("trueskill", "openskill-pl", "openskill-bt", "openskill-tm"):
        for wide in ("sigma", "tau"):
            try:
                create_model(name, {"beta": 1.0, "sigma": 2.0, "tau": 0.1, wide: 1e6})
            except ParameterError as exc:
                assert wide in str(exc) and "beta" in str(exc)
            else:
                raise AssertionError(f"{name}: {wide} = 1e6·beta was accepted")
        create_model(name, {"beta": 1.0, "sigma": 100.0, "tau": 100.0})  # the limit itself
