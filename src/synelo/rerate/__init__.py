"""Re-rating a pool from its stored rounds: the pure recompute (`engine`) and the
background job that runs it beside the live service and swaps its result in (`job`)."""
