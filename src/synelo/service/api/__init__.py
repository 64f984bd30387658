"""The HTTP API: one router per resource."""
