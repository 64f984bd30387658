"""Re-rating a pool from its stored rounds, above the store: the background job that runs
the pure recompute (`synelo.models.recompute`) beside the live service and swaps its result
in (`job`), what it rates with (`targets`), the auto-tune's fit (`autotune`), the
schedule that starts auto-tunes and refits (`schedule`), and the crash tests' hold
(`hold`)."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "advice",
    "autotune",
    "hold",
    "job",
    "schedule",
    "targets",
]
