"""The extended world of `synelo simulate-history`: the same files for a seed, a history the
reader and the service's report schema accept, rosters, joiners, leavers and commanders that
agree with each other, and winners drawn from the stated outcome formula."""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from synelo.evaluation.history import read_history
from synelo.evaluation.truth import load_truth
from synelo.schemas import RoundIn
from synelo.sim.history import HistoryWorldConfig, generate, outcome_logit, write

SMALL = HistoryWorldConfig(players=60, matches=600, team_size=4, maps=3, seed=7)


@pytest.fixture(scope="module")
def world() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    return generate(SMALL)


def test_a_seed_gives_the_same_world_and_another_seed_another() -> None:
    assert generate(SMALL) == generate(SMALL)
    other_lines, other_truth = generate(HistoryWorldConfig(**{**SMALL.to_json(), "seed": 8}))
    lines, truth = generate(SMALL)
    assert other_lines[1:] != lines[1:] and other_truth["players"] != truth["players"]


def test_outcome_logit_by_hand() -> None:
    # A: a full round at ŝ 6 and half a round at ŝ 4; B: a full round at ŝ 5.
    # Σ T·w·ŝ = 6 + 2 − 5 = 3 over Σ w = 2.5 → 1.2; F −0.3; κ 0.25·(1 − (−1)) = 0.5.
    played = [(True, 1.0, 6.0), (True, 0.5, 4.0), (False, 1.0, 5.0)]
    assert outcome_logit(played, -0.3, 2.0, 0.25) == pytest.approx(1.2 - 0.3 + 0.5)


def test_header_truth_and_config(world: tuple[list[dict[str, Any]], dict[str, Any]]) -> None:
    lines, truth = world
    assert len(lines) == SMALL.matches + 1
    header = lines[0]
    assert header["synelo_history"] == 1 and header["source"] == "synelo extended world"
    assert header["team_size"] == 4 and all(isinstance(n, str) for n in header["notes"])
    players = truth["players"]
    assert len(players) == 60 and set(players["p0001"]) == {"skill", "offset", "command", "arrival"}
    assert truth["reference_side"] == "marines"
    assert list(truth["maps"]) == ["ns2_map1", "ns2_map2", "ns2_map3"]
    # the derived defaults are written as the world used them
    config = truth["config"]
    assert config["offset_sd"] == 1.25 and config["command_sd"] == 2.5
    assert config["command_weight"] == 0.25 and config["seed"] == 7


def test_arrivals_a_third_at_the_start_the_rest_in_the_first_60_percent(
    world: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    lines, truth = world
    arrival = {p: f["arrival"] for p, f in truth["players"].items()}
    assert sum(a == 0 for a in arrival.values()) == 20
    assert max(arrival.values()) <= 0.6 * SMALL.matches
    for n, line in enumerate(lines[1:]):
        for side in "AB":
            assert all(arrival[p] <= n for p in line["participants"][side])


def test_rosters_participants_spans_and_commanders_agree(
    world: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    lines, _ = world
    start = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    joiners = leavers = 0
    for line in lines[1:]:
        duration, spans = line["duration"], line.get("time_played", {})
        assert line["id"].startswith("w") and line["winner"] in ("A", "B")
        assert 120 <= duration <= 3600 and float(duration).is_integer()
        assert datetime.fromisoformat(line["time"]) == start
        start += timedelta(seconds=duration + 60)
        assert sorted(line["sides"].values()) == ["aliens", "marines"]
        assert "time_played" not in line or spans  # the key only when someone missed time
        for side in "AB":
            team, played = line["teams"][side], line["participants"][side]
            assert len(team) == 4 and set(team) <= set(played)
            commander = line["commanders"][side]
            assert commander in team and commander not in spans  # commands the whole round
            for p in played:
                if p not in team:  # a late joiner: from their join to the end
                    joiners += 1
                    assert 0 < spans[p]["from"] < duration and spans[p]["to"] == duration
                elif p in spans:  # a leaver: from the start to their leave time
                    leavers += 1
                    assert spans[p]["from"] == 0 and 0 < spans[p]["to"] < duration
        everyone = line["participants"]["A"] + line["participants"]["B"]
        assert len(set(everyone)) == len(everyone)
        assert set(spans) <= set(everyone)
    # 6 non-commanders a round leave with p 0.15, 70 % of their slots retaken
    rounds = SMALL.matches
    assert leavers == pytest.approx(rounds * 6 * 0.15, rel=0.15)
    assert joiners == pytest.approx(leavers * 0.7, rel=0.15)


def test_the_history_reads_back_and_fits_a_round_report(tmp_path: Path) -> None:
    out, truth_path = tmp_path / "h.jsonl", tmp_path / "t.json"
    assert write(SMALL, out, truth_path) == SMALL.matches
    history = read_history(out, strict=True)
    assert not history.errors and len(history.matches) == SMALL.matches
    assert history.header["reference_side"] == "marines"
    first = history.matches[0]
    assert first.map in ("ns2_map1", "ns2_map2", "ns2_map3") and first.participants is not None
    assert first.details is not None and set(first.details) >= {"duration", "sides", "commanders"}
    assert sum(m.time_played is not None for m in history.matches) > SMALL.matches / 2
    # each line is also a round report the service would accept (its schema's checks)
    for line in orjson.loads(b"[" + b",".join(out.read_bytes().splitlines()[1:50]) + b"]"):
        body = {k: v for k, v in line.items() if k not in ("id", "time")}
        RoundIn(round_id=line["id"], server_id="sim", started_at=line["time"], **body)
    truth = load_truth(truth_path)
    assert len(truth.skill) == 60 and set(truth.traits) == {"offset", "command"}


def test_a_map_bias_shows_in_the_marines_win_rate() -> None:
    """With map biases of sd 2 in logit, marines win a map with bias b > 1 far more often
    than half, and one with b < −1 far less: F enters L with the side A plays."""
    config = HistoryWorldConfig(players=40, matches=3000, team_size=4, maps=6, map_bias_sd=2.0)
    lines, truth = generate(config)
    wins: Counter[str] = Counter()
    played: Counter[str] = Counter()
    for line in lines[1:]:
        played[line["map"]] += 1
        wins[line["map"]] += line["sides"][line["winner"]] == "marines"
    clear = {m: b for m, b in truth["maps"].items() if abs(b) > 1}
    assert clear
    for m, bias in clear.items():
        rate = wins[m] / played[m]
        assert (rate - 0.5) * math.copysign(1, bias) > 0.15


def test_skill_decides_winners() -> None:
    """The winners' round-start side skill exceeds the losers' on average."""
    lines, truth = generate(SMALL)
    players = truth["players"]
    gaps = []
    for line in lines[1:]:
        on = {side: line["sides"][side] == "marines" for side in "AB"}
        level = {
            side: sum(
                players[p]["skill"] + (1 if on[side] else -1) * players[p]["offset"]
                for p in line["teams"][side]
            )
            for side in "AB"
        }
        loser = "B" if line["winner"] == "A" else "A"
        gaps.append(level[line["winner"]] - level[loser])
    assert sum(gaps) / len(gaps) > 1.0


def logit_from_files(line: dict[str, Any], truth: dict[str, Any]) -> float:
    """L as docs/simulator.md states it, from a written line and the truth alone."""
    players, spans, duration = truth["players"], line.get("time_played", {}), line["duration"]
    lead = total = 0.0
    for side, sign in (("A", 1), ("B", -1)):
        on_marines = line["sides"][side] == "marines"
        for p in line["participants"][side]:
            if p in line["commanders"].values():
                continue  # in the chair: commanding, not fighting
            w = (spans[p]["to"] - spans[p]["from"]) / duration if p in spans else 1.0
            skill = players[p]["skill"] + (1 if on_marines else -1) * players[p]["offset"]
            lead += sign * w * skill
            total += w
    bias = truth["maps"][line["map"]] * (1 if line["sides"]["A"] == "marines" else -1)
    chair = {side: players[line["commanders"][side]]["command"] for side in "AB"}
    return lead / total + bias + truth["config"]["command_weight"] * (chair["A"] - chair["B"])


def test_winners_follow_the_stated_formula() -> None:
    """At a scale where P is nearly 0 or 1, the winner is the side L (recomputed from the
    files as documented: time weights, sides, map, commanders) favours."""
    config = HistoryWorldConfig(
        players=40, matches=800, team_size=4, skill_sd=150.0, map_bias_sd=75.0, seed=2
    )
    lines, truth = generate(config)
    logits = [logit_from_files(line, truth) for line in lines[1:]]
    agree = sum(
        (x > 0) == (line["winner"] == "A") for x, line in zip(logits, lines[1:], strict=True)
    )
    assert agree > 0.99 * config.matches
    assert sum(abs(x) > 3 for x in logits) > 0.8 * config.matches  # the scale is as meant


def test_a_side_offset_counts_on_the_side_played() -> None:
    """With skills all but equal and offsets of sd 10, the team whose players sit better on
    the sides they play (+o on marines, −o on aliens) wins most rounds, whichever letter."""
    config = HistoryWorldConfig(
        players=40,
        matches=1000,
        team_size=4,
        skill_sd=0.01,
        offset_sd=10.0,
        command_sd=0.0,
        map_bias_sd=0.0,
    )
    lines, truth = generate(config)
    offset = {p: f["offset"] for p, f in truth["players"].items()}
    right = 0
    for line in lines[1:]:
        lead = {
            side: sum(offset[p] for p in line["teams"][side] if p != line["commanders"][side])
            * (1 if line["sides"][side] == "marines" else -1)
            for side in "AB"
        }
        right += (lead["A"] > lead["B"]) == (line["winner"] == "A")
    assert right > 0.75 * config.matches


def test_a_fifth_of_the_players_take_most_chairs() -> None:
    """8v8: the 20 % who like to command (weight 10 against 1) sit in the chair more often
    than not; drawn without preference, the 16 most frequent of 80 take about 40 %."""
    lines, _ = generate(HistoryWorldConfig(players=80, matches=800, team_size=8))
    chairs = Counter(p for line in lines[1:] for p in line["commanders"].values())
    assert sum(n for _, n in chairs.most_common(16)) > 0.55 * 1600


def test_uneven_rounds_start_k_plus_one_against_k_and_favour_the_larger_side() -> None:
    """With `uneven_share` 0.4 about 40 % of the rounds start 5v4, the larger side A or B
    alike; L sums the fighters' skills (mean 5), so the larger side is σ(5/7) ≈ 67 % to win
    before the rest of L spreads the odds (64 % of them here); a stated bonus of 30 in logit
    makes it win all but never."""
    config = HistoryWorldConfig(
        players=40, matches=2000, team_size=4, maps=3, uneven_share=0.4, leave_rate=0.0
    )
    lines, truth = generate(config)
    sizes = Counter((len(x["teams"]["A"]), len(x["teams"]["B"])) for x in lines[1:])
    assert set(sizes) == {(4, 4), (5, 4), (4, 5)}
    assert sizes[(5, 4)] + sizes[(4, 5)] == pytest.approx(0.4 * config.matches, rel=0.1)
    assert sizes[(5, 4)] == pytest.approx(sizes[(4, 5)], rel=0.2)
    assert "5v4" in lines[0]["notes"][0] and truth["config"]["uneven_share"] == 0.4

    def larger_wins(lines: list[dict[str, Any]]) -> float:
        uneven = [x for x in lines[1:] if len(x["teams"]["A"]) != len(x["teams"]["B"])]
        return sum(
            len(x["teams"][x["winner"]]) > len(x["teams"]["AB".replace(x["winner"], "")])
            for x in uneven
        ) / len(uneven)

    assert 0.6 < larger_wins(lines) < 0.74
    for line in lines[1:]:  # no leaver: the participants are the rosters, a commander each
        assert line["participants"] == line["teams"] and "time_played" not in line
        assert all(line["commanders"][side] in line["teams"][side] for side in "AB")
    bonus = HistoryWorldConfig(**{**config.to_json(), "extra_player_bonus": 30.0})
    assert larger_wins(generate(bonus)[0]) > 0.99


def test_the_default_world_has_no_uneven_round() -> None:
    lines, truth = generate(SMALL)
    assert all(len(x["teams"]["A"]) == len(x["teams"]["B"]) == 4 for x in lines[1:])
    assert truth["config"]["uneven_share"] == 0.0 and "5v4" not in lines[0]["notes"][0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"players": 7}, "cannot fill a 4v4"),
        ({"players": 8, "uneven_share": 0.1}, "cannot fill a 5v4"),
        ({"uneven_share": 1.5}, "uneven_share"),
        ({"team_size": 1, "players": 10}, "turn commanders off"),
        ({"team_size": 0, "players": 10, "commanders": False}, "at least 1"),
        ({"leave_rate": 1.5}, "leave_rate"),
        ({"matches": 0}, "at least 1"),
    ],
)
def test_bad_configs_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        generate(HistoryWorldConfig(**{**SMALL.to_json(), **change}))


def _without(line: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in keys}


def test_a_world_without_times_is_the_default_world_without_its_times() -> None:
    """`times=False` draws nothing of its own: every row is the default's but its `time`."""
    lines, truth = generate(SMALL)
    bare, bare_truth = generate(HistoryWorldConfig(**{**SMALL.to_json(), "times": False}))
    assert all("time" not in x for x in bare[1:])
    assert bare[1:] == [_without(x, "time") for x in lines[1:]]
    assert bare_truth["players"] == truth["players"] and bare_truth["config"]["times"] is False
    assert "no times" in bare[0]["notes"][-1] and "times" not in truth["config"]


def test_a_symmetric_world_has_no_sides_offsets_biases_nor_commanders() -> None:
    """`sides=False` and `commanders=False`: the same rosters, maps and lengths as the
    default world, every offset, bias and commanding skill 0, no `sides` nor `commanders`."""
    lines, _ = generate(SMALL)
    config = HistoryWorldConfig(**{**SMALL.to_json(), "sides": False, "commanders": False})
    plain, truth = generate(config)
    same = ("teams", "map", "duration", "time")
    assert [{k: x[k] for k in same} for x in plain[1:]] == [
        {k: x[k] for k in same} for x in lines[1:]
    ]
    assert all("sides" not in x and "commanders" not in x for x in plain[1:])
    assert {p["offset"] for p in truth["players"].values()} == {0.0}
    assert {p["command"] for p in truth["players"].values()} == {0.0}
    assert set(truth["maps"].values()) == {0.0}
    # the header says so, and names no reference side for offsets the world has not
    assert "reference_side" in lines[0] and "reference_side" not in plain[0]
    assert (
        "σ(L) from hidden skills, side offsets, map biases and commanders'" in lines[0]["notes"][1]
    )
    assert plain[0]["notes"][1].startswith("P(A wins) = σ(L) from hidden skills; see")
    sided = HistoryWorldConfig(**{**SMALL.to_json(), "commanders": False})
    assert "from hidden skills, side offsets and map biases;" in generate(sided)[0][0]["notes"][1]


def test_a_1v1_world_without_commanders() -> None:
    """A 1v1 has one player a side and no chair; skill decides most rounds."""
    config = HistoryWorldConfig(
        players=20, matches=800, team_size=1, maps=2, commanders=False, leave_rate=0.0, seed=4
    )
    lines, truth = generate(config)
    assert all(len(x["teams"]["A"]) == len(x["teams"]["B"]) == 1 for x in lines[1:])
    assert all("commanders" not in x for x in lines[1:])
    skill = {p: v["skill"] for p, v in truth["players"].items()}
    better = sum(
        (skill[x["teams"]["A"][0]] > skill[x["teams"]["B"][0]]) == (x["winner"] == "A")
        for x in lines[1:]
    )
    assert better / config.matches > 0.7  # σ(Δs/2) with Δs of sd 2.5·√2: 0.75 expected
