"""The HTTP API: one thin router per resource (read the request, call a function, shape the
answer), beside the modules of what the routes and the pages share: `views` (how pools,
players and rounds look in answers), `reports` (a pool's health figures), `actions` (an
admin's changes), `balancing` and `roster` (splits, moves, predictions), `pool_settings`,
`round_body`. No router imports another router, and no page imports a router."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "actions",
    "advice",
    "balance",
    "balancing",
    "metrics",
    "models",
    "players",
    "pool_settings",
    "pools",
    "public",
    "reports",
    "rerate",
    "responses",
    "roster",
    "round_body",
    "rounds",
    "views",
]
