"""The NativeVotes plugin's natives, for a server that runs it (`server.libraries` holds
"nativevotes"); without it they are unavailable, as on a server without the plugin.

A vote is shown to its clients; `cast` records a client's choice and `finish` ends it as
NativeVotes does (its nativevotes.sp): MenuAction_VoteEnd with the winning item and
`param2` = winning votes | total votes << 16 (NativeVotes_GetInfo), or MenuAction_VoteCancel
when nobody voted, then MenuAction_End.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from plugin.emulate.registry import NativeTable

if TYPE_CHECKING:
    from plugin.emulate.engine import Server
    from plugin.emulate.natives import Context

NATIVES = NativeTable()
sp = NATIVES.native
LIBRARY = "nativevotes"
SCRAMBLE_NOW = 16  # NativeVotesType_ScrambleNow
MENU_ACTION_END, MENU_ACTION_VOTE_END, MENU_ACTION_VOTE_CANCEL = 16, 32, 128
YES, NO = 0, 1


@dataclass
class Vote:
    handler: int
    kind: int
    clients: list[int] = field(default_factory=list)
    choices: dict[int, int] = field(default_factory=dict)  # client -> YES or NO
    shown: bool = False
    result: str = ""  # "passed", "failed" once the plugin said


@sp("NativeVotes_IsVoteTypeSupported")
def _supported(c: Context, kind: int) -> bool:
    return kind == SCRAMBLE_NOW or 0 < kind < 30


@sp("NativeVotes_Create")
def _create(c: Context, handler: int, kind: int, actions: int = 0) -> int:
    return c.server.handles.new(Vote(handler, kind))


@sp("NativeVotes_Close")
def _close(c: Context, vote: int) -> None:
    c.server.handles.close(vote)


@sp("NativeVotes_IsVoteInProgress")
def _in_progress(c: Context) -> bool:
    return running(c.server) is not None


@sp("NativeVotes_Display")
def _display(c: Context, vote: int, clients: int, count: int, time: int, flags: int = 0) -> bool:
    v = c.handle(vote, Vote)
    if running(c.server) is not None:
        return False
    v.clients = c.mem.cells(clients, count)
    v.shown = True
    c.server.nativevote = vote  # type: ignore[attr-defined]
    c.server.note("vote", f"NativeVotes vote {v.kind} shown to {count} players for {time} s")
    return True


@sp("NativeVotes_DisplayPass")
def _pass(c: Context, vote: int, fmt: int = 0, *args: int) -> None:
    c.handle(vote, Vote).result = "passed"
    c.server.note("vote", "NativeVotes vote passed")


@sp("NativeVotes_DisplayFail")
def _fail(c: Context, vote: int, reason: int = 0) -> None:
    c.handle(vote, Vote).result = "failed"
    c.server.note("vote", f"NativeVotes vote failed ({reason})")


def running(server: Server) -> Vote | None:
    handle = getattr(server, "nativevote", 0)
    vote = server.handles.objects.get(handle) if handle else None
    return vote if isinstance(vote, Vote) and vote.shown and not vote.result else None


def cast(server: Server, client: int, yes: bool) -> None:
    vote = running(server)
    assert vote is not None, "no NativeVotes vote is running"
    if client in vote.clients:
        vote.choices[client] = YES if yes else NO


def finish(server: Server) -> None:
    """The vote's time is up: the plugin's handler gets the result, then MenuAction_End."""
    handle = server.nativevote  # type: ignore[attr-defined]
    vote = running(server)
    assert vote is not None, "no NativeVotes vote is running"
    yes = sum(1 for v in vote.choices.values() if v == YES)
    total = len(vote.choices)
    if total == 0:
        server.call_id(vote.handler, handle, MENU_ACTION_VOTE_CANCEL, 0, 0)
    else:
        item = YES if yes >= total - yes else NO
        winning = yes if item == YES else total - yes
        server.call_id(vote.handler, handle, MENU_ACTION_VOTE_END, item, winning | total << 16)
    if handle in server.handles.objects:
        server.call_id(vote.handler, handle, MENU_ACTION_END, 0, 0)
    server.nativevote = 0  # type: ignore[attr-defined]
