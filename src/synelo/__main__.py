"""`python -m synelo` is the `synelo` command."""

from synelo.cli import app

app(prog_name="synelo")
