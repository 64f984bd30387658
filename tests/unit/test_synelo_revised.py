"""F3 (revised) against values worked out by hand, and the choice between the two F3s.

Every expected value is a literal with its arithmetic in a comment; the code under test
never computes an expected value.
"""

from __future__ import annotations

import hashlib
import math
import random

import pytest

from synelo.config import Settings
from synelo.evaluation.adapters import HistoryInfo, create_replay, parse_options
from synelo.evaluation.history import Match
from synelo.models.synelo import SynElo
from synelo.ratings import (
    ConvergenceWindow,
    PlayerRecord,
    Rater,
    SynEloParams,
    apply_change,
    convergence,
    k_factor,
    prior_convergence,
    rate_player,
    rate_round,
    revised_convergence,
    seed_convergence,
    z_evidence,
)
from synelo.ratings.params import ParameterError
from synelo.ratings.synelo import Winner
from tests.service_reference import rate_like_the_service

REVISED = SynEloParams(convergence="revised")  # Θ 2400, K_min 2, K_max 72: n₁ = 300


def window_of(entries: list[tuple[int, float, float]], size: int = 500) -> ConvergenceWindow:
    w = ConvergenceWindow(size)
    for r, p, s in entries:
        w.append(r, p, s)
    return w


# --- the prior ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, 1.0),  # 1/(1 + 0)
        (300, 0.5),  # n₁ = 9·2400/72 = 300: 1/(1 + 300/300)
        (900, 0.25),  # 1/(1 + 900/300) = 1/4
        (100, 0.75),  # 1/(1 + 1/3) = 3/4
    ],
)
def test_prior_worked_by_hand(n: int, expected: float) -> None:
    assert prior_convergence(n, 72.0, 2400.0) == expected


def test_prior_scales_with_theta_over_k_max() -> None:
    # Θ 800, K_max 32: n₁ = 9·800/32 = 225; n = 225 → 1/2, n = 675 → 1/4
    assert prior_convergence(225, 32.0, 800.0) == 0.5
    assert prior_convergence(675, 32.0, 800.0) == 0.25
    assert prior_convergence(10**6, 0.0, 800.0) == 1.0  # K_max = 0: n₁ infinite


# --- the evidence -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("z", "expected"),
    [
        (0.0, 0.0),
        (2.5, 0.0),  # (2.5 − 2.5)/2 = 0
        (3.0, 0.25),  # (3 − 2.5)/2
        (3.5, 0.5),
        (4.5, 1.0),  # (4.5 − 2.5)/2 = 1
        (9.0, 1.0),  # clamped
    ],
)
def test_z_evidence_worked_by_hand(z: float, expected: float) -> None:
    assert z_evidence(z) == expected


# A window of 30 rounds (W = 500): 5 losses at P = 0.5, then 25 wins at P = 0.75.
#   L = 25: Σ(o−e) = 25·(1 − 0.75) = 6.25; Σe(1−e) = 25·0.75·0.25 = 4.6875
#           z_25 = 6.25/√4.6875 = 6.25/2.1650635 = 5/√3 = 2.8867513
#   L = 50, 100, 200, 500 (min(L, 30) = 30 rounds): Σ(o−e) = 6.25 + 5·(0 − 0.5) = 3.75;
#           Σe(1−e) = 4.6875 + 5·0.25 = 5.9375; z = 3.75/2.4367 = 1.5389675
#   max |z_L| = 2.8867513 → v_z = (2.8867513 − 2.5)/2 = 0.19337567
V_Z = (5 / math.sqrt(3) - 2.5) / 2
HAND = [(1000, 0.5, 0.0)] * 5 + [(1000, 0.75, 1.0)] * 25


def test_v_z_of_a_window_worked_by_hand() -> None:
    w = window_of(HAND)
    assert math.isclose(w.largest_z(), 2.8867513459481287, rel_tol=1e-15)
    assert math.isclose(z_evidence(w.largest_z()), 0.19337567297406437, rel_tol=1e-14)
    assert math.isclose(V_Z, 0.19337567297406437, rel_tol=1e-15)


def test_c_is_the_larger_of_prior_and_evidence() -> None:
    w = window_of(HAND)
    # n = 600: c_prior = 1/(1 + 600/300) = 1/3 > v_z = 0.1934 → C = 1/3
    assert revised_convergence(w, 600, REVISED) == 1 / 3
    # n = 1500: c_prior = 1/(1 + 5) = 1/6 = 0.1667 < v_z → C = v_z
    assert math.isclose(revised_convergence(w, 1500, REVISED), V_Z, rel_tol=1e-14)
    # K from C at R = R_0 (G = 1): K = 2 + 70·0.19337567 = 15.536297
    k = k_factor(revised_convergence(w, 1500, REVISED), 1000, REVISED)
    assert math.isclose(k, 15.536297108184506, rel_tol=1e-13)
    # and at n = 600: K = 2 + 70/3 = 25.333…
    assert math.isclose(k_factor(1 / 3, 1000, REVISED), 25.333333333333332, rel_tol=1e-15)


def test_losing_far_more_than_predicted_saturates_c() -> None:
    # 25 losses at P = 0.75: z_25 = −18.75/√4.6875 = −5√3 = −8.66; |z| ≥ 4.5 → v_z = 1
    w = window_of([(1000, 0.75, 0.0)] * 25)
    assert math.isclose(w.largest_z(), 5 * math.sqrt(3), rel_tol=1e-15)
    assert revised_convergence(w, 5000, REVISED) == 1.0


def test_results_as_predicted_leave_the_prior() -> None:
    # alternate wins and losses at P = 0.5: Σ(o−e) is 0 or ±0.5 at every scale, |z| < 2.5
    w = window_of([(1000, 0.5, float(i % 2)) for i in range(500)])
    assert w.largest_z() < 0.5
    # n = 2700: 1/(1 + 9) = 0.1
    assert revised_convergence(w, 2700, REVISED) == 0.1


def test_fewer_than_two_rounds_is_c_one() -> None:
    assert revised_convergence(ConvergenceWindow(), 5000, REVISED) == 1.0
    assert revised_convergence(window_of([(1000, 0.5, 0.5)]), 5000, REVISED) == 1.0
    # two rounds: the prior at n = 5000 is 1/(1 + 50/3) = 3/53
    two = window_of([(1000, 0.5, 0.5)] * 2)
    assert math.isclose(revised_convergence(two, 5000, REVISED), 3 / 53, rel_tol=1e-15)


# --- choosing the version -------------------------------------------------------------------


def test_convergence_dispatches_on_the_pool_parameter() -> None:
    w = window_of(HAND)
    seed = SynEloParams()
    assert seed.convergence == "seed"  # the dataclass keeps old stored parameters' meaning
    assert convergence(w, seed) == seed_convergence(w, seed)
    assert convergence(w, seed, 1500) == seed_convergence(w, seed)
    assert convergence(w, REVISED, 1500) == revised_convergence(w, 1500, REVISED)
    assert convergence(w, REVISED, 1500) != convergence(w, seed)
    with pytest.raises(ValueError, match="rounds played"):
        convergence(w, REVISED)


def test_params_name_the_version() -> None:
    assert SynEloParams.from_dict({"theta": 800.0}).convergence == "seed"  # stored before it
    assert SynEloParams.from_dict({"convergence": "revised"}).convergence == "revised"
    assert SynEloParams().to_dict()["convergence"] == "seed"
    with pytest.raises(ParameterError) as err:
        SynEloParams(convergence="bayes")  # type: ignore[arg-type]
    assert err.value.names == ("convergence",)


def test_record_and_rater_use_rounds_played() -> None:
    w = window_of(HAND)
    rec = PlayerRecord(1000, 1500, w)
    assert math.isclose(rec.current_convergence(REVISED), V_Z, rel_tol=1e-14)
    rec = PlayerRecord(1000, 600, window_of(HAND))
    k, after = Rater(REVISED).rate(rec, 0.5, 1.0)
    # C = 1/3, K = 2 + 70/3 = 25.333; R' = round(1000 + 25.333·0.5) = round(1012.67) = 1013
    assert rec.convergence == 1 / 3
    assert math.isclose(k, 25.333333333333332, rel_tol=1e-15) and after == 1013
    change = rate_player("x", "A", 1000, 600, window_of(HAND), 0.5, "A", REVISED)
    assert (change.k, change.after) == (k, 1013)


def test_rater_agrees_with_the_functions_bit_for_bit() -> None:
    """Rater's inlined F3 (revised) equals revised_convergence + k_factor for a range of
    records."""
    rater = Rater(REVISED)
    for n, entries in [(0, HAND[:1]), (40, HAND), (2000, HAND), (9000, HAND[::-1])]:
        rec = PlayerRecord(1180, n, window_of(entries))
        k, _ = rater.rate(rec, 0.3, 0.0)
        c = revised_convergence(rec.window, n, REVISED)
        assert rec.convergence == c
        assert k == k_factor(c, 1180, REVISED)


# --- the replay's model ---------------------------------------------------------------------


def test_model_default_is_revised_and_a_seed_journal_stays_seed() -> None:
    plain = create_replay("synelo", {}, HistoryInfo(3))
    assert plain.parameters()["convergence"] == "revised" and plain.parameters()["revised"] == 1
    # a pool's journal from before the choice: its header params do not name a version
    old = create_replay("synelo", {}, HistoryInfo(3, {"params": {"theta": 2400.0}}))
    assert old.parameters()["convergence"] == "seed"
    named = create_replay("synelo", {}, HistoryInfo(3, {"params": {"convergence": "revised"}}))
    assert named.parameters()["convergence"] == "revised"
    # -p revised=0|1 wins over both
    opts = parse_options(SynElo, {"revised": "0"})
    assert opts == {"revised": 0}
    assert create_replay("synelo", opts, HistoryInfo(3)).parameters()["convergence"] == "seed"
    on = parse_options(SynElo, {"revised": "1"})
    info = HistoryInfo(3, {"params": {"theta": 2400.0}})
    assert create_replay("synelo", on, info).parameters()["convergence"] == "revised"
    with pytest.raises(ValueError, match="revised"):
        create_replay("synelo", {"revised": 0.5}, HistoryInfo(3))


def test_the_headcount_reported_is_the_one_in_use() -> None:
    """`headcount`, like `revised`, is reported as the replay uses it: 1 (F1u) for a new
    history, 0 (the seed's sums) for the export of a pool made before F1u, whatever the
    options' listing says for a new history; -p headcount wins over both."""
    assert create_replay("synelo", {}, HistoryInfo(3)).parameters()["headcount"] == 1
    old = create_replay("synelo", {}, HistoryInfo(3, {"params": {"theta": 2400.0}}))
    assert old.parameters()["uneven"] == "sums" and old.parameters()["headcount"] == 0
    info = HistoryInfo(3, {"params": {"theta": 2400.0}})
    assert create_replay("synelo", {"headcount": 1}, info).parameters()["headcount"] == 1
    assert create_replay("synelo", {"headcount": 0}, HistoryInfo(3)).parameters()["headcount"] == 0


def test_revised_model_is_the_service_code() -> None:
    """The replay's synelo (revised by default) gives the ratings of rate_round +
    apply_change with a revised pool's parameters, the functions the service calls."""
    matches = [
        Match(
            str(i),
            (f"p{i % 5}", f"p{(i + 1) % 5}"),
            (f"p{(i + 2) % 5}", "q"),
            "AB"[(i * 7) % 3 % 2] if i % 5 else "draw",
        )
        for i in range(300)
    ]
    model = create_replay("synelo", {"window": 60}, HistoryInfo(max_team_size=2))
    params = SynEloParams(theta=200.0, window=60, convergence="revised", k_min=12.0)
    expected_p, records, cs = rate_like_the_service(matches, params)
    assert [model.step(m) for m in matches] == expected_p
    assert model.ratings() == {p: rec.rating for p, rec in records.items()}
    assert len(cs) > 50  # the prior and the z-test both moved C


# --- the seed's F3 unchanged ----------------------------------------------------------------


def seed_game_digest(params: SynEloParams, matches: int) -> str:
    """SHA-256 of every P_A and journal row (player, before, after, repr(K)) of a fixed
    game of 40 players (3v3, 2v3, 4v4, some draws) rated with rate_round + apply_change."""
    rng = random.Random(2025)
    skill = {f"p{i}": rng.gauss(0, 300) for i in range(40)}
    recs: dict[str, PlayerRecord] = {}
    h = hashlib.sha256()
    for _ in range(matches):
        size_a, size_b = rng.choice([(3, 3), (3, 3), (2, 3), (4, 4)])
        picked = rng.sample(sorted(skill), size_a + size_b)
        a, b = picked[:size_a], picked[size_a:]
        gap = sum(skill[p] for p in a) - sum(skill[p] for p in b)
        u = rng.random()
        p_win = 0.95 / (1 + 2.718281828 ** (-gap / 400))
        winner: Winner = "draw" if u < 0.05 else ("A" if u < 0.05 + p_win else "B")
        for p in picked:
            recs.setdefault(p, PlayerRecord(params.r0, 0, ConvergenceWindow(params.window)))
        rr = rate_round(
            [recs[p].rating for p in a],
            [recs[p].rating for p in b],
            [(p, "A", recs[p]) for p in a] + [(p, "B", recs[p]) for p in b],
            winner,
            params,
        )
        h.update(repr(rr.p_a).encode())
        for c in rr.changes:
            h.update(f"{c.player} {c.before} {c.after} {c.k!r};".encode())
            apply_change(recs[c.player], c)
    return h.hexdigest()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (SynEloParams(), "ed6c11e56459ded19adcbb08d155301196b28f0aa3b83f381ddc7a0301bdcd87"),
        (
            SynEloParams(theta=800.0, window=60, t_shadow=5, k_max=40.0),
            "b032e854d2d29d828668cb3fa60e9853b3cf02b41567127622d0e3dba5c3dd90",
        ),
    ],
)
def test_seed_f3_rates_bit_for_bit_as_before(params: SynEloParams, expected: str) -> None:
    """The digests were computed with the code before F3 (revised) existed (commit 990d779,
    pure Python): pools that keep the seed's F3 rate exactly as they did."""
    assert params.convergence == "seed"
    assert seed_game_digest(params, 3000) == expected
    revised = SynEloParams.from_dict({**params.to_dict(), "convergence": "revised"})
    assert seed_game_digest(revised, 3000) != expected  # the digest does see F3


def test_k_min_follows_f3_unless_named() -> None:
    """F5's K_min of a pool or history that names none is 12 with F3 (revised) and the
    design's 2 with the seed's F3; a K_min that is named (SYNELO_K_MIN, a pool's params, a
    replay option, a journal's stored parameters) is kept as it is."""
    settings = Settings(_env_file=None)
    assert settings.rating_params(1200.0).k_min == 12.0
    assert settings.rating_params(1200.0, convergence="seed").k_min == 2.0
    assert settings.rating_params(1200.0, convergence="seed", k_min=5.0).k_min == 5.0
    assert Settings(_env_file=None, k_min=3.0).rating_params(1200.0).k_min == 3.0
    assert Settings(_env_file=None, convergence="seed").rating_params(1200.0).k_min == 2.0
    info = HistoryInfo(max_team_size=3)
    assert create_replay("synelo", {}, info).parameters()["k_min"] == 12.0
    assert create_replay("synelo", {"revised": 0}, info).parameters()["k_min"] == 2.0
    assert create_replay("synelo", {"k_min": 7.0}, info).parameters()["k_min"] == 7.0
    journal = HistoryInfo(header={"params": {"theta": 300.0, "k_min": 2.0}})
    assert create_replay("synelo", {}, journal).parameters()["k_min"] == 2.0
