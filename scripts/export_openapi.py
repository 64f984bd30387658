"""Write the service's OpenAPI document to docs/api/openapi.json (or check that it is current).

    .venv/bin/python scripts/export_openapi.py            # rewrite the committed file
    .venv/bin/python scripts/export_openapi.py --check    # exit 1 when it differs

The document is what `synelo.service.app.create_app` serves at /openapi.json. The app is built
on a throw-away SQLite folder, with every SYNELO_* variable ignored, and shut down again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "api" / "openapi.json"


def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document, as `GET /openapi.json` answers it."""
    from synelo.config import Settings
    from synelo.service.app import create_app

    for name in [name for name in os.environ if name.startswith("SYNELO_")]:
        del os.environ[name]  # the document must not depend on this machine's settings
    with tempfile.TemporaryDirectory() as folder:
        app = create_app(Settings(data_dir=Path(folder)))
        try:
            return app.openapi()
        finally:
            # run the app's shutdown: it stops the round writer and the WAL checkpointer
            async def _lifespan() -> None:
                async with app.router.lifespan_context(app):
                    pass

            asyncio.run(_lifespan())


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    parser.add_argument("--output", type=Path, default=TARGET)
    args = parser.parse_args(argv)
    text = render(openapi_document())
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run scripts/export_openapi.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
