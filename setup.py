"""Build hook: compile the pure rating math with mypyc (the same source, ~1.5× faster).

`synelo.ratings`'s window, model and parameters are plain typed Python; mypyc turns them into C
extensions at install time, so the service, the replay and the simulator all run the compiled
modules. Without mypyc (or with SYNELO_PURE=1) the package installs as pure Python and behaves
identically, only slower.

The store's window codec (synelo.store.window_codec) is not compiled: its work is done by
struct and array in C already, and the loop it needs, appending a chunk's entries, is the
window's own `extend`, compiled here.
"""

import os
import tempfile
from pathlib import Path

from setuptools import setup

COMPILED = [
    "src/synelo/ratings/params.py",
    "src/synelo/ratings/window.py",
    "src/synelo/ratings/synelo.py",
]


def compiled_modules() -> list:
    """The mypyc extensions, type-checked under a bare mypy configuration: pyproject.toml's
    loads the pydantic plugin, which the isolated build environment does not have (and the
    compiled modules do not use)."""
    if os.environ.get("SYNELO_PURE") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # pragma: no cover - the build requirements include mypy
        return []
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder, "mypy.ini")
        config.write_text("[mypy]\n")
        return mypycify(["--config-file", str(config), *COMPILED], opt_level="3")


setup(ext_modules=compiled_modules())
