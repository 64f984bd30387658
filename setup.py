"""Build hook: compile the pure rating math with mypyc (the same source, ~1.5× faster).

`synelo.ratings`'s window, model and parameters are plain typed Python; mypyc turns them into C
extensions at install time, so the service, the replay and the simulator all run the compiled
modules. Without mypyc (or with SYNELO_PURE=1) the package installs as pure Python and behaves
identically, only slower.
"""

import os

from setuptools import setup

COMPILED = [
    "src/synelo/ratings/params.py",
    "src/synelo/ratings/window.py",
    "src/synelo/ratings/synelo.py",
]

ext_modules = []
if os.environ.get("SYNELO_PURE") != "1":
    try:
        from mypyc.build import mypycify
    except ImportError:  # pragma: no cover - the build requirements include mypy
        pass
    else:
        ext_modules = mypycify(COMPILED, opt_level="3")

setup(ext_modules=ext_modules)
