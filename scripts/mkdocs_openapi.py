"""mkdocs hook: render docs/api/openapi.json as tables where a page says <!-- openapi -->.

The committed document is the app's own (tests/docs/test_openapi_file.py keeps it current),
so the OpenAPI page always lists the routes and models the service really has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MARKER = "<!-- openapi -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    source = Path(config["docs_dir"]) / "api" / "openapi.json"
    return markdown.replace(MARKER, render(json.loads(source.read_text(encoding="utf-8"))))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _type(schema: dict[str, Any] | bool) -> str:
    """A short type: a model's name, list[…], a | b, an enum's values (`true`: any value)."""
    if isinstance(schema, bool):
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " \\| ".join(_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type", "any")
    if kind == "array":
        items = schema.get("prefixItems")
        if items:
            return "[" + ", ".join(_type(s) for s in items) + "]"
        return f"list[{_type(schema.get('items', {}))}]"
    if kind == "object" and "additionalProperties" in schema:
        return f"dict[str, {_type(schema['additionalProperties'])}]"
    return str(kind)


def _limits(schema: dict[str, Any]) -> str:
    keys = ["minimum", "maximum", "exclusiveMinimum", "minLength", "maxLength"]
    keys += ["minItems", "maxItems", "pattern"]
    parts = [f"{key} {schema[key]}" for key in keys if key in schema]
    for option in schema.get("anyOf", []):
        parts += [f"{key} {option[key]}" for key in keys if key in option]
    return ", ".join(parts)


def render(doc: dict[str, Any]) -> str:
    out = [f"Version {doc['info']['version']}, OpenAPI {doc['openapi']}.", "", "## Routes", ""]
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            out += [f"### `{method.upper()} {path}`", "", _cell(op.get("description", "")), ""]
            params = op.get("parameters", [])
            if params:
                out += [
                    "| parameter | in | type | required | limits |",
                    "| --- | --- | --- | --- | --- |",
                ]
                for p in params:
                    schema = p.get("schema", {})
                    out.append(
                        f"| `{p['name']}` | {p['in']} | {_type(schema)} | "
                        f"{'yes' if p.get('required') else 'no'} | {_cell(_limits(schema))} |"
                    )
                out.append("")
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                out += [f"Body: {_type(body['schema'])}", ""]
            out += ["| status | meaning | body |", "| --- | --- | --- |"]
            for status, response in op.get("responses", {}).items():
                content = response.get("content", {}).get("application/json", {})
                shown = _type(content["schema"]) if content.get("schema") else ""
                out.append(f"| {status} | {_cell(response.get('description', ''))} | {shown} |")
            out.append("")
    out += ["## Models", ""]
    for name, schema in doc["components"]["schemas"].items():
        out += [f"### {name}", "", _cell(schema.get("description", "")), ""]
        required = set(schema.get("required", []))
        props = schema.get("properties", {})
        if props:
            out += ["| field | type | required | default | limits | meaning |"]
            out += ["| --- | --- | --- | --- | --- | --- |"]
            for field, spec in props.items():
                default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
                out.append(
                    f"| `{field}` | {_type(spec)} | {'yes' if field in required else 'no'} | "
                    f"{default} | {_cell(_limits(spec))} | {_cell(spec.get('description', ''))} |"
                )
            out.append("")
    return "\n".join(out)
