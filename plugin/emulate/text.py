"""SourceMod's format strings and translations, for the natives that take them.

`sm_format` follows SourceMod's `atcprintf` (core/logic/sprintf.cpp): flags `-` and `0`, a
width, a precision, and the types d i u b c f s x X N L t T and %%. Every argument after the
format is passed by reference, so each is an address. `%t` takes a phrase and formats it with
that phrase's `#format` arguments in the language of the translation target; `%T` takes the
target as its own argument first. Phrases come from the plugin's translation files, read as
KeyValues (`"Phrases" { "Key" { "#format" "{1:d}" "en" "text {1}" } }`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from plugin.emulate.machine import Memory, to_float

_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|([{}])')
_SPEC = re.compile(r"%([-0]*)(\d*)(?:\.(\d+))?([diubcfsxXNLtT%])")
_PLACE = re.compile(r"\{(\d+)\}")
_FORMAT_ARG = re.compile(r"\{(\d+):([^}]+)\}")

# The phrases of SourceMod's common.phrases that its target helpers use, in our words.
COMMON_PHRASES = {
    "No matching client": "No player matches that target.",
    "No matching clients": "No players match that target.",
    "More than one client matched": "More than one player matches that target.",
    "Unable to target": "You cannot target that player.",
    "Cannot target bot": "That target is a bot.",
    "Target must be alive": "That player must be alive.",
    "Target must be dead": "That player must be dead.",
    "Target is not in game": "That player is not in the game yet.",
    "Player no longer available": "That player is gone.",
}


def parse_keyvalues(text: str) -> dict[str, object]:
    """A KeyValues document as nested dicts (quoted keys and values, braces)."""
    stack: list[dict[str, object]] = [{}]
    key: str | None = None
    for match in _TOKEN.finditer(text):
        word, brace = match.group(1), match.group(2)
        if brace == "{":
            child: dict[str, object] = {}
            stack[-1][key or ""] = child
            stack.append(child)
            key = None
        elif brace == "}":
            stack.pop()
        elif key is None:
            key = word.replace('\\"', '"').replace("\\n", "\n")
        else:
            stack[-1][key] = word.replace('\\"', '"').replace("\\n", "\n")
            key = None
    return stack[0]


@dataclass
class Phrase:
    formats: list[str]  # the printf type of each argument, in argument order
    text: dict[str, str]  # language -> text with {n} placeholders


class Translations:
    def __init__(self) -> None:
        self.phrases: dict[str, Phrase] = {
            key: Phrase([], {"en": text}) for key, text in COMMON_PHRASES.items()
        }

    def load(self, path: Path) -> None:
        doc = parse_keyvalues(path.read_text(encoding="utf-8"))
        phrases = doc.get("Phrases", {})
        assert isinstance(phrases, dict)
        for key, body in phrases.items():
            assert isinstance(body, dict)
            spec = str(body.get("#format", ""))
            order = sorted((int(n), t) for n, t in _FORMAT_ARG.findall(spec))
            texts = {k: str(v) for k, v in body.items() if not k.startswith("#")}
            self.phrases[key] = Phrase([t for _, t in order], texts)

    def exists(self, key: str) -> bool:
        return key in self.phrases


@dataclass
class FormatContext:
    memory: Memory
    translations: Translations
    client_name: Callable[[int], str]
    client_log: Callable[[int], str]
    target: int = 0  # the translation target (SetGlobalTransTarget); 0 the server


class FormatError(Exception):
    """The format needs more arguments than were given (SourceMod throws a native error)."""


def sm_format(ctx: FormatContext, fmt: str, args: Sequence[int]) -> str:
    """`fmt` formatted with the by-reference `args`, as SourceMod's `Format` does."""
    out: list[str] = []
    pos = 0
    queue = list(args)

    def take() -> int:
        if not queue:
            raise FormatError(f"format {fmt!r}: not enough arguments")
        return queue.pop(0)

    for match in _SPEC.finditer(fmt):
        out.append(fmt[pos : match.start()])
        pos = match.end()
        flags, width, precision, kind = match.groups()
        if kind == "%":
            out.append("%")
            continue
        if kind in "tT":
            phrase = ctx.memory.string(take())
            target = ctx.memory.cell(take()) if kind == "T" else ctx.target
            out.append(_translate(ctx, phrase, target, take))
            continue
        out.append(_one(ctx, kind, flags, width, precision, take()))
    out.append(fmt[pos:])
    return "".join(out)


_NUMBER: dict[str, Callable[[int], str]] = {
    "d": str,
    "i": str,
    "u": lambda v: str(v & 0xFFFFFFFF),
    "b": lambda v: format(v & 0xFFFFFFFF, "b"),
    "x": lambda v: format(v & 0xFFFFFFFF, "x"),
    "X": lambda v: format(v & 0xFFFFFFFF, "X"),
    "c": lambda v: chr(v & 0xFF),
}


def _one(
    ctx: FormatContext,
    kind: str,
    flags: str,
    width: str,
    precision: str | None,
    addr: int,
) -> str:
    """One argument, passed by reference: `addr` holds the value, or is the string."""
    if kind == "s":
        text = ctx.memory.string(addr)
        text = text[: int(precision)] if precision else text
    else:
        value = ctx.memory.cell(addr)
        if kind == "f":
            text = f"{to_float(value):.{int(precision) if precision else 6}f}"
        elif kind == "N":
            text = ctx.client_name(value)
        elif kind == "L":
            text = ctx.client_log(value)
        else:
            text = _NUMBER[kind](value)
    if not width:
        return text
    if "-" in flags:
        return text.ljust(int(width))
    return text.rjust(int(width), "0" if "0" in flags else " ")


def _translate(ctx: FormatContext, key: str, target: int, take: Callable[[], int]) -> str:
    phrase = ctx.translations.phrases.get(key)
    if phrase is None:
        raise FormatError(f"language phrase {key!r} not found")
    values = [take() for _ in phrase.formats]
    text = phrase.text.get("en") or next(iter(phrase.text.values()), "")

    def place(m: re.Match[str]) -> str:
        n = int(m.group(1))
        spec = _SPEC.fullmatch("%" + phrase.formats[n - 1])
        assert spec is not None, phrase.formats[n - 1]
        flags, width, precision, kind = spec.groups()
        return _one(ctx, kind, flags, width, precision, values[n - 1])

    del target  # one language: every client reads English
    return _PLACE.sub(place, text)
