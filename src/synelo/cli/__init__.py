"""The `synelo` command line: set-up, pools, tokens, the server, and evaluation (import,
replay, tune) as thin wrappers over `synelo.evaluation`. One module per command group;
importing a module registers its commands."""

from __future__ import annotations

# `synelo --help` lists the commands in the order they were registered, which is the order
# of these imports: keep it.
# isort: off
from synelo.cli import server, data, evaluation, simulate, pools, pool_import, tokens, histories  # noqa: F401
from synelo.cli import advise  # noqa: F401

# isort: on
from synelo.cli.app import app, main

__all__ = ["app", "main"]
