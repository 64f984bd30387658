"""Every shell block of the README, CONTRIBUTING.md, plugin/README.md and every page under
docs/ runs as written, page by page, in page order, or says why not (issue 37).

Each page gets a reader's set-up of its own (`shell_blocks.Sandbox`): a clone where `synelo
init` ran, `../shared` beside it, and, when a block talks to the service (it reads `$URL`,
as the README's tour does), `synelo serve` running on it. Its blocks run in one bash, so a
block may use what an earlier one made; the first block that exits non-zero fails the test,
named by page and line. curl exits non-zero on an HTTP error answer there. A block marked
not-run says why in the page and is not run; one marked run-by is run by the test it names;
a cut-down runs on the smaller input its marker gives (`shell_blocks`'s docstring)."""

from __future__ import annotations

import os
import re
import shutil
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.docs.shell_blocks import (
    NEEDS_ROOT,
    ROOT,
    Block,
    BlockFailed,
    Sandbox,
    serving,
    shell_blocks,
    synelo_init,
)

# every page a reader meets: the README, the contributing guide, the plugin's README and each
# page of the site (issue 37: 29 blocks of pages outside the first list ran nowhere)
PAGES = (
    "README.md",
    "CONTRIBUTING.md",
    "plugin/README.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")),
)
SHARED = ROOT.parent / "shared"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("curl") is None, reason="needs bash and curl"
)


def beside(block: Block, lines: int = 10) -> str:
    """The page's words within `lines` lines of the block, its markers left out."""
    page = (ROOT / block.page).read_text(encoding="utf-8").splitlines()
    end = block.line + len(block.text.splitlines())  # the closing fence's index
    near = page[max(0, block.line - 1 - lines) : block.line - 1] + page[end + 1 : end + 1 + lines]
    return " ".join(line for line in near if not line.lstrip().startswith("<!--"))


def to_run(page: str) -> list[Block]:
    return [b for b in shell_blocks(page) if b.not_run is None and b.run_by is None]


def test_every_page_a_reader_meets_is_checked() -> None:
    """No page is left out of the two tests below: each markdown page under docs/, the
    README, CONTRIBUTING.md and plugin/README.md, so each of their shell blocks runs here, is
    run by the test it names, or says why not."""
    pages = {"README.md", "CONTRIBUTING.md", "plugin/README.md"}
    pages |= {str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")}
    assert len(pages) > 20 and pages == set(PAGES)


def test_every_block_runs_here_or_says_why() -> None:
    """A block is run by this test, by the test it names, or says why it cannot run; one
    that would need root (sudo, systemd, a proxy) is never run by mistake. The page says so
    beside a block not run, cut down or run elsewhere, where a reader sees it."""
    blocks = [b for page in PAGES for b in shell_blocks(page)]
    assert len(blocks) >= 20, "the parser finds the pages' blocks"
    for block in blocks:
        if block.not_run or block.cut_downs or block.run_by:
            note = block.run_by or "docs test"
            assert note in beside(block), f"{block.where}: say {note!r} beside the block"
        if block.not_run is not None:
            assert len(block.not_run) >= 20, f"{block.where}: say why it is not run"
        elif block.run_by is not None:
            runner = ROOT / block.run_by
            assert runner.is_file(), f"{block.where}: no test {block.run_by}"
            assert block.page in runner.read_text(encoding="utf-8"), (
                f"{block.where}: {block.run_by} does not run {block.page}'s block"
            )
        else:
            found = NEEDS_ROOT.search(block.script())
            assert found is None, (
                f"{block.where} runs {found and found[0]!r}: mark it "
                "<!-- not-run: why --> and say so beside it in the page"
            )


@pytest.mark.parametrize("page", [page for page in PAGES if to_run(page)])
def test_the_page_runs_as_written(page: str, tmp_path: Path) -> None:
    blocks = to_run(page)
    if any("../shared" in b.script() for b in blocks) and not (SHARED / "data").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{page} reads ../shared, which CI has beside the clone")
        pytest.skip(f"{page} reads ../shared/data, which is not beside this clone")
    sandbox = Sandbox(tmp_path).create()
    synelo_init(sandbox.clone, sandbox.env())
    with ExitStack() as stack:
        if any(re.search(r"\$\{?URL\b", b.script()) for b in blocks):
            url = stack.enter_context(serving(sandbox.clone, sandbox.env()))
            outputs = sandbox.run(blocks, sandbox.env(URL=url))
        else:
            outputs = sandbox.run(blocks, sandbox.env())
    assert len(outputs) == len(blocks)
    for block, printed in zip(blocks, outputs, strict=True):
        assert "Traceback (most recent call last)" not in printed, f"{block.where}:\n{printed}"


PAGE = """\
# A page

```sh
echo one > one.txt
```

<!-- cut-down: 999 => 9 -->
```sh
echo 999 > cut.txt
```

<!-- not-run: this block would delete the world, and says so here -->
```sh
rm -rf /
```

```sh
synelo replay missing.jsonl
touch never.txt
```
"""


def test_a_failing_block_fails_the_run_and_is_named(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    blocks = shell_blocks(str(page))
    assert [b.line for b in blocks] == [3, 8, 13, 17]
    assert blocks[1].cut_downs == (("999", "9"),)
    assert blocks[2].not_run == "this block would delete the world, and says so here"
    sandbox = Sandbox(tmp_path / "sandbox").create()
    runnable = [b for b in blocks if b.not_run is None]
    with pytest.raises(BlockFailed, match=r"page\.md:17: the block exited [1-9]") as failed:
        sandbox.run(runnable, sandbox.env())
    assert "missing.jsonl" in str(failed.value)  # the command's own message, shown
    assert (sandbox.clone / "one.txt").read_text() == "one\n"
    assert (sandbox.clone / "cut.txt").read_text() == "9\n"  # the cut-down ran
    assert not (sandbox.clone / "never.txt").exists()  # nothing after the failure ran


def test_a_cut_down_that_no_longer_matches_is_an_error(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- cut-down: 20000 => 200 -->\n```sh\necho 2000\n```\n", encoding="utf-8")
    (block,) = shell_blocks(str(page))
    with pytest.raises(ValueError, match="cut-down '20000' is not in the block"):
        block.script()
