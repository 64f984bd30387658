"""README.md's five-minute tour, run as written against a real `synelo serve`.

The tour's shell blocks are taken from README.md verbatim and run with bash, in order, in one
shell (the first block sets the variables the others use), in a folder where `synelo init`
ran, as `make run` does at the repository's root. The only difference from a reader's
terminal is the port: the tour reads the service's address from `URL` (default
http://127.0.0.1:8000), and the test sets `URL` to the port its server listens on.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.docs.shell_blocks import ROOT, environment, serving, synelo_init

MARK = "@@synelo-tour-block@@"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("curl") is None, reason="needs bash and curl"
)


def tour_blocks() -> list[str]:
    """The ```sh blocks of README.md's "A five-minute tour" section, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## A five-minute tour\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    return re.findall(r"^```sh\n(.*?)^```$", section, flags=re.S | re.M)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A folder set up by `synelo init` (tokens in data/tokens/) and `synelo serve` on it."""
    folder = tmp_path_factory.mktemp("tour")
    synelo_init(folder)
    with serving(folder) as url:
        yield folder, url


def run_tour(folder: Path, url: str) -> list[str]:
    """Run every block in one bash, in order; each block's output, stripped."""
    blocks = tour_blocks()
    script = "set -euo pipefail\n" + "".join(f"echo '{MARK}'\n{block}" for block in blocks)
    r = subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env=environment(URL=url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, f"the tour failed (exit {r.returncode}): {r.stdout}{r.stderr}"
    assert r.stderr == "", r.stderr
    outputs = [part.strip() for part in r.stdout.split(MARK + "\n")[1:]]
    assert len(outputs) == len(blocks)
    return outputs


def documented_pairs(block: str) -> list[str]:
    """The `"key":value` pairs the block's sample output (its `# ` comments) shows, for
    values written out in full (numbers, booleans, strings other than "...")."""
    comments = "".join(line[1:].strip() for line in block.splitlines() if line.startswith("#"))
    # a number cut short with "..." (71.71...) is compared as a prefix of the printed one
    return re.findall(r'"\w+":(?:-?\d+(?:\.\d+)?|true|false|null|"(?!\.\.\.")[^"]*")', comments)


def test_the_tour_has_the_steps_the_readme_promises() -> None:
    blocks = tour_blocks()
    assert len(blocks) == 8, "update this test with the tour"
    assert blocks[0].startswith("URL=${URL:-http://127.0.0.1:8000}\n")
    for block, route in zip(
        blocks[1:],
        [
            '/v1/pools"',
            '/rounds"',
            '/rounds"',
            "/players/",
            '/splits"',
            '/quality"',
            '-X PATCH -H "$A" -H "$J" "$URL/v1/pools/tour"',
        ],
        strict=True,
    ):
        assert route in block


def test_readme_tour_runs_as_written(service: tuple[Path, str]) -> None:
    folder, url = service
    blocks = tour_blocks()
    out = run_tour(folder, url)

    assert out[0] == ""  # the variables
    pool = json.loads(out[1])
    assert (pool["name"], pool["team_size"], pool["theta"]) == ("tour", 2, 200.0)

    rated = json.loads(out[2])
    assert (rated["seq"], rated["p_a"], rated["winner"]) == (1, 0.5, "A")
    after = {p["steam_id"]: (p["team"], p["after"], p["delta"]) for p in rated["players"]}
    assert after == {
        "76561197960265730": ("A", 1036, 36),
        "76561197960265731": ("A", 1036, 36),
        "76561197960265732": ("B", 964, -36),
        "76561197960265733": ("B", 964, -36),
    }

    assert out[3] == "200"  # the retry: the stored answer, nothing changed

    player = json.loads(out[4])
    assert (player["rating"], player["rounds_played"], player["visible"]) == (1036, 1, False)
    assert 71 < player["k"] < 72

    splits = json.loads(out[5])
    assert [s["k"] for s in splits["splits"]] == [2]
    split = splits["splits"][0]
    assert (split["gap"], split["optimal"], split["sum_a"], split["sum_b"]) == (0, True, 2000, 2000)
    assert len(split["A"]) == len(split["B"]) == 2 and len(split["bench"]) == 1

    quality = json.loads(out[6])
    assert (quality["rounds"], quality["players"], quality["shadow"]) == (1, 4, 4)

    _ends_on_a_page_with_content(out[7], url)

    # every value the README shows as sample output is what the service printed
    for block, printed in zip(blocks, out, strict=True):
        for pair in documented_pairs(block):
            assert pair in printed.replace(" ", ""), f"README shows {pair}; printed {printed}"


def test_readme_tour_runs_again_as_the_readme_says(service: tuple[Path, str]) -> None:
    """ "Run the tour a second time and the pool already exists: its POST answers 409, and
    the rest runs as before."""
    folder, url = service
    run_tour(folder, url)  # the pool exists after this, whichever test ran first
    out = run_tour(folder, url)
    assert "exists already" in json.loads(out[1])["detail"]
    assert out[3] == "200"
    assert json.loads(out[2])["seq"] == 1  # the stored answer of the first run
    assert json.loads(out[4])["rating"] == 1036
    assert json.loads(out[6])["rounds"] == 1
    _ends_on_a_page_with_content(out[7], url)


def _ends_on_a_page_with_content(printed: str, url: str) -> None:
    """The last step made the pool public and printed a page's address: anyone (no token)
    gets that page with the round on it, and `/` lists the pool."""
    answer, address = printed.splitlines()
    assert json.loads(answer)["public"] is True
    assert address == f"{url}/pools/tour/rounds/srv1-0001"
    page = httpx.get(address)
    assert page.status_code == 200, page.text
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.text))
    assert "Round srv1-0001" in text and "koth_harvest" in text
    assert "Team A's predicted chance: 50 %" in text and "Team A won" in text
    assert text.count("76561197960265730") == 1 and "76561197960265733" in text
    index = httpx.get(f"{url}/").text
    assert 'href="/pools/tour"' in index and "No public pool yet" not in index
