"""Pages people look at, rendered on the server from the same data as the public read
endpoints and through the same functions (`synelo.service.api.views`, `reports`, `actions`,
`balancing`), never through a route: Jinja2 templates, charts drawn as SVG
(`synelo.service.charts`), no script."""

# Its modules: import each from its own (the package itself imports none of them).
__all__ = [
    "access",
    "admin",
    "advice",
    "docs",
    "glossary",
    "health",
    "public",
    "scramble",
    "servers",
    "settings",
    "templating",
]
