"""synelo: skill ratings and optimal team splits for multiplayer team games."""

__version__ = "0.1.0"

__all__ = ["__version__"]
