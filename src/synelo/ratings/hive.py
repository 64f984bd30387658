"""The NS2 Hive skill model (seed 001), H1–H10 of docs/maths/hive.md: pure functions of a
round, the players' skills and the pool's context, shared by the service, the replay and the
full-history solve.

A round is reduced to `HiveRound`: each player's side, time weight and commanding weight
(H1), the context bias of the round (H7) and the result. Everything after that is a weighted
logistic regression on the players' skills.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

LN2 = math.log(2.0)
LENGTHS_KEPT = 63  # the durations the median round length is taken over (H10)
P_FLOOR = 1e-3  # a context rate is kept inside [P_FLOOR, 1 − P_FLOOR] (H7)

Team = Literal["A", "B"]


@dataclass(frozen=True, slots=True)
class HiveParams:
    """One pool's Hive parameters (see `synelo.models.hive` for their bounds)."""

    c: float = 0.75  # constant learning rate (skills, commanding, side offsets)
    a: float = 0.8  # AdaGrad learning rate
    eps: float = 0.02  # ε: AdaGrad's start, sets the size of a first round's step
    command_rate: float = 0.25  # χ's rate against s's (H6)
    k: float = 4.0  # Gamma prior shape
    theta: float = 1.25  # Gamma prior scale: a new player's skill is kθ
    solve_prior_sd: float = 1.0  # w: the solve's Normal prior on offsets and χ (H8)
    display_scale: float = 200.0  # display points per skill unit
    round_length: float = 600.0  # r before the pool has reported a duration (seconds)
    bias_prior: float = 30.0  # m: pseudo-rounds shrinking a context bucket to its parent
    bias_half_life: float = 1000.0  # a bucket's counts halve over this many of its rounds

    @property
    def s0(self) -> float:
        """A new player's skill: the prior's mean kθ (H9)."""
        return self.k * self.theta


@dataclass(slots=True)
class HiveSkill:
    """One player's Hive state: skill s, its AdaGrad sum g, side offset o, commanding skill χ
    and its AdaGrad sum, and the rounds that moved each."""

    s: float
    g: float = 0.0
    o: float = 0.0
    chi: float = 0.0
    g_chi: float = 0.0
    rounds: int = 0
    commanded: int = 0


@dataclass(frozen=True, slots=True)
class Presence:
    """A player in a round: their team, side sign σ (H2), and weights t (playing) and
    c (commanding), both H1's."""

    player: str
    team: Team
    sign: int  # T_i: +1 for A, −1 for B
    side: int  # σ_i: +1 on the reference side, −1 on the other, 0 without sides
    t: float
    c: float


@dataclass(frozen=True, slots=True)
class HiveRound:
    """A round as H2 sees it: who was there with which weights, the context bias F and the
    result G for team A (1, ½ or 0)."""

    presences: tuple[Presence, ...]
    bias: float
    g: float


@dataclass(slots=True)
class HiveContext:
    """What a pool has learned beside its players: its reference side, its recent round
    lengths (H10) and its context buckets (H7: key → [first side's wins, rounds], decayed)."""

    reference: str | None = None
    lengths: list[float] = field(default_factory=list)
    buckets: dict[str, list[float]] = field(default_factory=dict)


# --- H1: time weights ---------------------------------------------------------------------


def time_weight(enter: float, leave: float, length: float) -> float:
    """H1: t = a^(−enter) − a^(−leave) with a = 2^(2/r), r the median round length: being in
    the round early counts more, and playing to the middle of a typical round counts as much
    as playing from there to any end."""
    if leave <= enter:
        return 0.0
    rate = 2.0 * LN2 / length
    return math.exp(-rate * enter) - math.exp(-rate * leave)


def intervals_weight(spans: Iterable[tuple[float, float]], length: float) -> float:
    """H1 summed over disjoint spans (a commander's time as a field player)."""
    return sum(time_weight(enter, leave, length) for enter, leave in spans)


def minus(span: tuple[float, float], hole: tuple[float, float]) -> list[tuple[float, float]]:
    """The parts of `span` outside `hole`."""
    (e, x), (he, hx) = span, hole
    return [(lo, hi) for lo, hi in ((e, min(x, he)), (max(e, hx), x)) if hi > lo]


def median_length(context: HiveContext, default: float) -> float:
    """H10: r, the median of the last LENGTHS_KEPT reported round lengths (`default` before
    the pool has reported any)."""
    kept = sorted(context.lengths)
    if not kept:
        return default
    mid = len(kept) // 2
    return kept[mid] if len(kept) % 2 else 0.5 * (kept[mid - 1] + kept[mid])


def remember_length(context: HiveContext, duration: float | None) -> None:
    """H10: add a round's length to the ones the median is taken over (the oldest drops)."""
    if duration is not None and duration > 0:
        context.lengths.append(float(duration))
        del context.lengths[:-LENGTHS_KEPT]


# --- H2: prediction -----------------------------------------------------------------------


def side_signs(sides: Mapping[str, str] | None, reference: str | None) -> tuple[int, int]:
    """σ for team A and team B (H2): +1 on the reference side, −1 on the other side, 0 for
    both when the round has no sides or neither is the reference."""
    if not sides or reference is None:
        return 0, 0
    if sides.get("A") == reference:
        return 1, -1
    if sides.get("B") == reference:
        return -1, 1
    return 0, 0


def logit_a(
    round: HiveRound, skills: Mapping[str, HiveSkill], s0: float, *, offsets: bool = True
) -> float:
    """H2: logit P(A) = Σ T·t·ŝ / Σ t + F + Σ T·c·χ / Σ c, with ŝ = s + σ·o (a player absent
    from `skills` is new: s = s0, o = χ = 0). Without `offsets`, ŝ = s (side-blind)."""
    play = command = play_w = command_w = 0.0
    for p in round.presences:
        skill = skills.get(p.player)
        s, o, chi = (s0, 0.0, 0.0) if skill is None else (skill.s, skill.o, skill.chi)
        if p.t > 0.0:
            play += p.sign * p.t * (s + p.side * o if offsets else s)
            play_w += p.t
        if p.c > 0.0:
            command += p.sign * p.c * chi
            command_w += p.c
    total = round.bias
    if play_w > 0.0:
        total += play / play_w
    if command_w > 0.0:
        total += command / command_w
    return total


def sigmoid(x: float) -> float:
    """The logistic function, without overflow at either end."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


# --- H3–H6: the online update -------------------------------------------------------------


def adagrad_rate(params: HiveParams, g: float) -> float:
    """H4: α = c + a/√(g + ε), g the sum of the player's *squared* gradients (the seed's
    g ← g + ∇s is an erratum: AdaGrad sums squares, and a sum of signed gradients can go
    negative under the root)."""
    return params.c + params.a / math.sqrt(g + params.eps)


def update(
    round: HiveRound,
    skills: Mapping[str, HiveSkill],
    params: HiveParams,
    rated: Iterable[str],
) -> tuple[float, dict[str, HiveSkill]]:
    """H3–H6: P(A) of the round as played, and the new state of every rated player.

    - H3, skill: ∇s = T·(G − p)·t/Σt, g ← g + (∇s)², then s ← s + α·∇s with H4's α.
    - H5, side offset: ∇o = T·σ·(G − p)·t/Σt, o ← o + c·∇o (constant rate only; the seed's
      o ← c·∇o forgets every earlier round and is an erratum).
    - H6, commanding: ∇χ = T·(G − p)·c/Σc, χ ← χ + r_χ·α_χ·∇χ with its own AdaGrad sum
      and r_χ = `command_rate`: a commander's gradient is a whole team's share, n times a
      field player's, and a full-size step made χ the noisiest term of H2.
    """
    p = sigmoid(logit_a(round, skills, params.s0))
    error = round.g - p
    play_w = sum(pr.t for pr in round.presences)
    command_w = sum(pr.c for pr in round.presences)
    wanted = set(rated)
    out: dict[str, HiveSkill] = {}
    for pr in round.presences:
        if pr.player not in wanted or pr.player in out:
            continue
        old = skills.get(pr.player)
        new = (
            HiveSkill(params.s0)
            if old is None
            else HiveSkill(old.s, old.g, old.o, old.chi, old.g_chi, old.rounds, old.commanded)
        )
        if pr.t > 0.0 and play_w > 0.0:
            grad = pr.sign * error * pr.t / play_w
            new.g += grad * grad  # the seed's order: g first, then α from it
            new.s += adagrad_rate(params, new.g) * grad
            new.o += params.c * pr.side * grad  # ∇o = σ·∇s = T·σ·(G − p)·t/Σt
            new.rounds += 1
        if pr.c > 0.0 and command_w > 0.0:
            grad = pr.sign * error * pr.c / command_w
            new.g_chi += grad * grad
            new.chi += params.command_rate * adagrad_rate(params, new.g_chi) * grad
            new.commanded += 1
        out[pr.player] = new
    return p, out


# --- H7: the context bias -----------------------------------------------------------------


def size_class(players: int) -> int:
    """The game-size bucket of H7: 2, 3–4, 5–8, 9–16, 17–32… players at round start."""
    return max(players - 1, 1).bit_length()


def context_keys(
    sides: Mapping[str, str] | None, map_name: str, players: int
) -> tuple[tuple[str, ...], bool]:
    """H7's buckets of a round, coarse to fine (side pair; + map; + game size), and whether
    team A is the pair's first side. The pair is ordered by name, so that the rounds of
    marines against aliens meet in one bucket whichever team played which; without sides
    it is the team letters A, B."""
    if sides and sides.get("A") and sides.get("B"):
        a, b = str(sides["A"]), str(sides["B"])
        a_first = a < b
    else:
        a, b, a_first = "A", "B", True
    a, b, map_name = _escaped(a), _escaped(b), _escaped(map_name)
    pair = f"{a}|{b}" if a_first else f"{b}|{a}"
    with_map = f"{pair}|{map_name}"
    return (pair, with_map, f"{with_map}|{size_class(players)}"), a_first


def _escaped(name: str) -> str:
    """A name with its `|` and `\\` escaped, so that no two buckets share a key."""
    return name.replace("\\", "\\\\").replace("|", "\\|")


def bucket_rate(context: HiveContext, keys: Sequence[str], prior_rounds: float) -> float:
    """H7: the first side's win rate in the finest bucket, each level shrunk towards its
    parent: q = (wins + m·q_parent) / (rounds + m), starting from q = ½. Three rounds won by
    the same side in a bucket whose parent is even read (3 + m/2)/(3 + m): 54.5 % at
    m = 30, not 100 %."""
    q = 0.5
    for key in keys:
        wins, rounds = context.buckets.get(key, (0.0, 0.0))
        q = (wins + prior_rounds * q) / (rounds + prior_rounds)
    return min(max(q, P_FLOOR), 1.0 - P_FLOOR)


def context_bias(
    context: HiveContext, keys: Sequence[str], a_first: bool, prior_rounds: float
) -> float:
    """H7: F = logit of the shrunk win rate, for team A (negated when A is the second side)."""
    q = bucket_rate(context, keys, prior_rounds)
    f = math.log(q / (1.0 - q))
    return f if a_first else -f


def learn_context(
    context: HiveContext, keys: Sequence[str], first_won: float, half_life: float
) -> None:
    """H7: add a round to each of its buckets, whose counts first decay by 2^(−1/h): a
    bucket remembers about h/ln 2 of its rounds, so a rate that changes is followed within
    a few half-lives."""
    keep = 2.0 ** (-1.0 / half_life)
    for key in keys:
        wins, rounds = context.buckets.get(key, (0.0, 0.0))
        context.buckets[key] = [wins * keep + first_won, rounds * keep + 1.0]


# --- H9: display --------------------------------------------------------------------------


def display(s: float, params: HiveParams) -> float:
    """H9: the positive number shown for skill s: display_scale·s, at least 1 (a new player
    shows display_scale·kθ)."""
    return max(1.0, params.display_scale * s)


def encode_context(context: HiveContext) -> dict[str, Any]:
    return {"reference": context.reference, "lengths": context.lengths, "buckets": context.buckets}


def decode_context(data: Mapping[str, Any]) -> HiveContext:
    return HiveContext(
        data.get("reference"),
        [float(x) for x in data.get("lengths", [])],
        {str(k): [float(v[0]), float(v[1])] for k, v in data.get("buckets", {}).items()},
    )
