"""The shell blocks of the docs pages, and a folder laid out like a reader's clone to run them in.

A reader runs a page's blocks in order, in one terminal, at the root of a clone where `make
run` ran (`synelo init`, then `synelo serve` in another terminal, which blocks reach at
`$URL`), with `../shared` beside the clone when they have it. `Sandbox` builds that: `clone/`
(the repository's folders linked, its files and `src/` copied, so that nothing a block writes
lands in the repository), `shared` linked to the repository's `../shared`, a home of its own,
and `synelo`, `python` and `python3` on the PATH as the interpreter running the tests
(`.venv/bin/…` in the clone too). The tests add the data folder (`synelo_init`) and the
service (`serving`).

A comment just above a block's fence tells the test about it, and the page says the same in
words beside the block:

- `<!-- not-run: REASON -->`: the block cannot run here (a live game server, root, the
  network); the test runs none of it.
- `<!-- run-by: tests/docs/test_x.py -->`: a test of its own runs the block, as written.
- `<!-- cut-down: OLD => NEW -->` (one comment per replacement): the block runs with OLD
  replaced by NEW, a smaller input that keeps `make test` short. OLD must occur in the block.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
SYNELO = [sys.executable, "-m", "synelo"]
SHELLS = {"sh", "bash", "shell"}
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*(?P<kind>not-run|run-by|cut-down):\s*(?P<value>.*?)\s*-->\s*$")
BLOCK_MARK = "@@synelo-docs-block"
# what would change the machine running the tests: a block that does one of these must say
# not-run (or be run by a test of its own), never run here by mistake
NEEDS_ROOT = re.compile(r"\b(sudo|systemctl|useradd|journalctl|apt-get|nginx|caddy)\b")
# folders of the clone a sandbox leaves out: state and build output
LEFT_OUT = {".git", ".venv", ".venv-plugin", "data", "build", "dist", "site"}


@dataclass(frozen=True)
class Block:
    """One fenced shell block of a page and what its markers say."""

    page: str
    line: int  # the opening fence's, 1-based
    text: str
    not_run: str | None = None
    run_by: str | None = None
    cut_downs: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def script(self) -> str:
        """The text to run: the block with its cut-down replacements made."""
        text = self.text
        for old, new in self.cut_downs:
            if old not in text:
                raise ValueError(f"{self.where}: cut-down {old!r} is not in the block")
            text = text.replace(old, new)
        return text


def shell_blocks(page: str) -> list[Block]:
    """The ```sh (bash, shell) blocks of `page` (relative to the repository), in page order."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        closing = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        if opening["info"].strip().split(" ")[0] in SHELLS:
            body = "\n".join(line[indent:] for line in lines[i + 1 : end]) + "\n"
            blocks.append(_with_markers(Block(page, i + 1, body), lines[:i]))
        i = end + 1
    return blocks


def _with_markers(block: Block, before: list[str]) -> Block:
    """The block with the markers of the comment lines right above its fence."""
    not_run = run_by = None
    cut_downs: list[tuple[str, str]] = []
    for line in reversed(before):
        marker = MARKER.match(line)
        if marker is None:
            break
        kind, value = marker["kind"], marker["value"]
        if kind == "not-run":
            not_run = value
        elif kind == "run-by":
            run_by = value
        else:
            old, arrow, new = value.partition(" => ")
            if not arrow:
                raise ValueError(f"{block.where}: a cut-down reads `OLD => NEW`: {value!r}")
            cut_downs.insert(0, (old, new))
    return Block(block.page, block.line, block.text, not_run, run_by, tuple(cut_downs))


def environment(**extra: str) -> dict[str, str]:
    """This process's environment without synelo's settings: a reader's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNELO_") and k != "URL"}
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def synelo_init(folder: Path, env: dict[str, str] | None = None) -> None:
    """`synelo init` in `folder`, as `make run` does at the clone's root."""
    init = subprocess.run(
        [*SYNELO, "init"],
        cwd=folder,
        env=env or environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert init.returncode == 0, init.stdout + init.stderr
    assert (folder / "data" / "tokens" / "admin.token").exists()


@contextmanager
def serving(folder: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """`synelo serve` on a free port in `folder` until the block ends; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [*SYNELO, "serve", "--port", str(port), "--log-level", "warning"],
        cwd=folder,
        env=env or environment(),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise AssertionError("synelo serve did not come up")
            time.sleep(0.05)  # polling a port: there is no event to await
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


class BlockFailed(AssertionError):
    """A block exited non-zero: which one, and what it printed."""


@dataclass
class Sandbox:
    """A reader's set-up for the blocks of one page (see the module's docstring)."""

    base: Path

    @property
    def clone(self) -> Path:
        return self.base / "clone"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def bin(self) -> Path:
        return self.base / "bin"

    def create(self) -> Sandbox:
        self.clone.mkdir(parents=True)
        self.home.mkdir()
        for entry in ROOT.iterdir():
            if entry.name in LEFT_OUT or entry.name.endswith("cache"):
                continue
            if entry.is_file():
                shutil.copy2(entry, self.clone / entry.name)
            elif entry.name == "src":  # a build writes its egg-info there
                shutil.copytree(
                    entry,
                    self.clone / "src",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__", "*.egg-info"),
                )
            else:
                (self.clone / entry.name).symlink_to(entry)
        shared = ROOT.parent / "shared"
        if shared.is_dir():
            (self.base / "shared").symlink_to(shared)
        for folder in (self.bin, self.clone / ".venv" / "bin"):
            _shims(folder)
        # curl exits 22 on an HTTP error answer (and still prints it): a block whose request
        # the service refuses fails
        (self.home / ".curlrc").write_text("fail-with-body\n", encoding="utf-8")
        return self

    def env(self, **extra: str) -> dict[str, str]:
        """The reader's shell: the sandbox's home and commands first on the PATH, and outside
        coverage (the blocks check the pages, not the code's coverage, and the tracer would
        slow their replays several times)."""
        cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
        env = environment(
            HOME=str(self.home),
            PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
            PIP_CACHE_DIR=cache,  # the reader's cache, though HOME is the sandbox's
            **extra,
        )
        return {k: v for k, v in env.items() if not k.startswith("COVERAGE_PROCESS_")}

    def run(self, blocks: list[Block], env: dict[str, str], timeout: float = 900) -> list[str]:
        """Run `blocks` in order in one bash at the clone's root (a block may use what an
        earlier one set); each block's output (stdout and stderr, as printed). A block that
        exits non-zero stops the run: `BlockFailed` names it, with its output."""
        script = "set -euo pipefail\n" + "".join(
            f"echo '{BLOCK_MARK} {n}'; echo '{BLOCK_MARK} {n}' >&2\n{block.script()}"
            for n, block in enumerate(blocks)
        )
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=self.clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        outputs = _split(result.stdout, len(blocks))
        errors = _split(result.stderr, len(blocks))
        printed = [(out or "") + (err or "") for out, err in zip(outputs, errors, strict=True)]
        if result.returncode != 0:
            last = max((n for n, out in enumerate(outputs) if out is not None), default=0)
            block = blocks[last]
            raise BlockFailed(
                f"{block.where}: the block exited {result.returncode}\n"
                f"--- block ---\n{block.script()}--- output ---\n{printed[last]}"
            )
        return printed


def _split(text: str, count: int) -> list[str | None]:
    """The parts of `text` after each block's mark; None for a block that never started."""
    parts: list[str | None] = [None] * count
    for chunk in text.split(f"{BLOCK_MARK} ")[1:]:
        number, _, rest = chunk.partition("\n")
        parts[int(number)] = rest
    return parts


def _shims(folder: Path) -> None:
    """`synelo`, `python` and `python3` in `folder`, all this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, command in (
        ("synelo", f'exec "{sys.executable}" -m synelo "$@"'),
        ("python", f'exec "{sys.executable}" "$@"'),
        ("python3", f'exec "{sys.executable}" "$@"'),
    ):
        shim = folder / name
        shim.write_text(f"#!/bin/sh\n{command}\n", encoding="utf-8")
        shim.chmod(0o755)
