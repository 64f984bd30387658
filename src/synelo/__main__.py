"""`python -m synelo` is the `synelo` command."""

from synelo.cli import main

main()
