"""Pages people look at, rendered on the server from the same data as the public read
endpoints: Jinja2 templates, charts drawn as SVG here, no script."""
