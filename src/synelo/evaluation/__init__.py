"""Replays of match histories through the rating models: importers, metrics, tuning, truth
scores against a simulated world, and plots."""
