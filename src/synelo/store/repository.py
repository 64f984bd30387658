"""The store as the service sees it: `Store`, every operation on synelo's data, each in its
own transaction (or, for `submit_in`, in the caller's).

`Store` is a facade. Its machinery (the engine, transactions, the memory it keeps) is
`store.core`'s `Core`, which it extends; each operation is a function of the module of its
concept, taking the store first, bound here as a method as it is (no call in between):

- `store.rounds`: the round path, rating a submitted round;
- `store.pools`: making, listing and changing pools;
- `store.players`: players read by key, and the admin's set, reset and hide;
- `store.seasons`: a pool's new season, every rating pulled back toward the mean;
- `store.leaderboards`: the public board, its places, and the leaderboards;
- `store.round_views`: stored rounds as the pages show them;
- `store.journal`: players' histories, charts and trends, and the pool's journal export;
- `store.admin_log`: the admin log;
- `store.quality` and `store.health`: the quality endpoint's, the health page's and the
  server view's figures;
- `store.tokens`: the API's tokens.

A re-rate's store work (jobs, journal generations, the swap) is `store.generations`'
`RerateStore`, which works on a `Store`.
"""

from __future__ import annotations

from synelo.domain import RoundReport, SubmitResult
from synelo.store import (
    admin_log,
    health,
    journal,
    leaderboards,
    players,
    pools,
    quality,
    round_views,
    rounds,
    seasons,
    tokens,
)
from synelo.store.core import Clock, Core, utcnow
from synelo.store.tokens import StoredToken, hash_token

__all__ = ["Clock", "Store", "StoredToken", "hash_token", "utcnow"]


class Store(Core):
    """The repository: every operation the service needs, each in its own transaction."""

    # --- rounds (store.rounds) --------------------------------------------------------------
    submit_in = rounds.submit_in  # the round writer's, once a round: bound, not wrapped

    def submit_round(self, pool_name: str, report: RoundReport) -> SubmitResult:
        """Rate a round once, in a transaction of its own (see `submit_in`)."""
        with self.write_transaction() as conn:
            return self.submit_in(conn, pool_name, report)

    # --- pools (store.pools) ----------------------------------------------------------------
    create_pool = pools.create_pool
    set_public = pools.set_public
    set_autotune = pools.set_autotune
    list_pools = pools.list_pools
    visible_pool = pools.visible_pool
    pools_with_activity = pools.pools_with_activity
    read_context = pools.read_context

    # --- players (store.players) ------------------------------------------------------------
    lookup = players.lookup
    read_players = players.read_players
    read_strengths = players.read_strengths
    save_names = players.save_names
    name_of = players.name_of
    set_rating = players.set_rating
    reset_player = players.reset_player
    set_hidden = players.set_hidden
    keys_named = players.keys_named

    # --- seasons (store.seasons) ------------------------------------------------------------
    start_season = seasons.start_season

    # --- boards (store.leaderboards) --------------------------------------------------------
    board = leaderboards.board
    public_board = leaderboards.public_board
    board_ratings = leaderboards.board_ratings
    public_place = leaderboards.public_place
    public_places = leaderboards.public_places
    hidden_players = leaderboards.hidden_players
    leaderboard = leaderboards.leaderboard

    # --- stored rounds (store.round_views) --------------------------------------------------
    round_view = round_views.round_view
    recent_rosters = round_views.recent_rosters
    voided_rounds_of = round_views.voided_rounds_of
    round_ids = round_views.round_ids
    round_sites = round_views.round_sites
    server_rounds = round_views.server_rounds

    # --- journal and admin log (store.journal, store.admin_log) -----------------------------
    history = journal.history
    rating_series = journal.rating_series
    trends = journal.trends
    record = journal.record
    journal_rounds = journal.journal_rounds
    changes = admin_log.read_changes

    # --- quality (store.quality, store.health) ----------------------------------------------
    quality = quality.quality
    server_health = health.server_health  # before `health` names the method here
    health = health.pool_health

    # --- tokens (store.tokens) --------------------------------------------------------------
    add_token = tokens.add_token
    token_identity = tokens.token_identity
    token_holder = tokens.token_holder
    use_token = tokens.use_token
    list_tokens = tokens.list_tokens
    revoke_token = tokens.revoke_token
