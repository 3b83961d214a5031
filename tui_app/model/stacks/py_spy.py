"""A replica's Python stacks as ``py-spy dump --json`` writes them, read into plain values.

The dump comes from a program on a replica's machine, so it is read as hostile input: a trainer
that is stuck may also be broken or malicious, and whatever it makes py-spy print ends up in the
service's answer, a terminal and the TUI. Every field is checked for its type (a malformed dump
raises ``StackFormatError`` naming the thread, the frame and the field), every string is cut to
``MAX_TEXT`` characters with its control characters made visible (a frame name or a local's
repr must not move the cursor, ring the bell or break a line), and the dump is bounded:
``MAX_THREADS`` threads, ``MAX_FRAMES`` frames each (the innermost, where it is stuck) and
``MAX_LOCALS`` locals per frame. What lies past a bound is left out, not refused: a program
with a thousand threads is still worth a look.

py-spy's shape (0.3 and later): a JSON array of threads, each with ``thread_id``,
``thread_name`` (may be null), ``active``, ``owns_gil`` and ``frames``, innermost first; a
frame has ``name``, ``filename``, ``short_filename``, ``line`` and ``locals`` (null without
``--locals``; else objects with ``name``, ``arg``, ``repr``, ``addr``). Other keys (``pid``,
``os_thread_id``, ``module``, ``is_entry``, ``process_info``) are not kept: they say nothing
about where the program is.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tui_app.model.jobs.wire import as_int

__all__ = [
    "MAX_FRAMES",
    "MAX_LOCALS",
    "MAX_TEXT",
    "MAX_THREADS",
    "PY_SPY_KEYS",
    "WIRE_KEYS",
    "Frame",
    "Local",
    "Spelling",
    "StackFormatError",
    "ThreadStack",
    "clean_text",
    "maybe_str",
    "need_bool",
    "need_int",
    "need_list",
    "need_mapping",
    "need_str",
    "parse_dump",
    "read_threads",
]

MAX_THREADS = 512
"""Threads kept from one dump: far more than a trainer runs, few enough to show."""
MAX_FRAMES = 256
"""Frames kept per thread, the innermost: past them a deep recursion only repeats itself."""
MAX_LOCALS = 64
"""Locals kept per frame, in py-spy's order (arguments first)."""
MAX_TEXT = 500
"""Characters kept of any one string (a name, a path, a repr): enough for a long path, not
enough for one repr to fill the answer."""

_THREAD_ID_END = 2**64
"""Thread ids are unsigned 64-bit numbers (``pthread_t``)."""
_LINE_LIMIT = 2**31
"""py-spy's line numbers are 32-bit signed; past that a number is not a line."""


class StackFormatError(ValueError):
    """A dump (or the service's answer holding dumps) that is not what it must be; the message
    says where and what."""


@dataclass(frozen=True)
class Local:
    """One local variable (or argument) of a frame, as ``py-spy dump --locals`` read it."""

    name: str
    repr: str | None
    """py-spy's repr of the value; None when it could not read one."""
    arg: bool
    """Whether it is one of the function's arguments."""


@dataclass(frozen=True)
class Frame:
    """One Python frame: the function and where in its file the thread is."""

    name: str
    """The function, qualified where py-spy knows the class (``Thread.run``)."""
    filename: str
    """The full path, which tells the program's own code from the libraries'."""
    short_filename: str
    """The path as py-spy shortens it (``trainer/task.py``): what a reader is shown."""
    line: int
    locals: tuple[Local, ...] | None
    """None when the dump was taken without ``--locals``."""


@dataclass(frozen=True)
class ThreadStack:
    """One thread of a replica's process and its frames."""

    thread_id: int
    name: str | None
    """The thread's name (``MainThread``); None when py-spy could not read it."""
    active: bool
    """Whether it was running (not waiting on a lock, a socket, a sleep) when dumped."""
    owns_gil: bool
    frames: tuple[Frame, ...]
    """Innermost first, as py-spy gives them."""


def _json_type(value: object) -> str:
    """A value's type in JSON's words, for an error message that a reader of the dump can
    match against it (not Python's ``dict``, ``NoneType``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _escape(char: str) -> str:
    """A character that a terminal would act on (or that cannot be written out at all: a lone
    surrogate), as the escape Python's repr uses."""
    special = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if char in special:
        return special[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Control characters (escape sequences start with one), format characters (bidirectional
overrides reorder what a reader sees), lone surrogates and line separators."""


def clean_text(text: str, *, limit: int = MAX_TEXT, one_line: bool = False) -> str:
    """``text`` safe to print and to show in one line: unsafe characters as escapes, cut to
    ``limit`` characters with ``…`` marking a cut. ``one_line`` first folds every run of
    whitespace (newlines too) into one space, for a message that was several lines (py-spy's
    stderr) rather than a repr whose newlines mean something. Applying it again changes
    nothing, so a dump read, sent and read again stays equal."""
    head = text[: limit + 1]
    if one_line:
        head = " ".join(head.split())
    if not head.isprintable():  # the common case, checked in C; isprintable() is stricter
        head = "".join(
            _escape(c) if unicodedata.category(c) in _UNSAFE_CATEGORIES else c for c in head
        )
    if len(head) > limit or len(text) > limit:
        return head[: limit - 1] + "…"
    return head


def need_mapping(value: object, where: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or a ``StackFormatError`` saying what ``where`` was
    instead."""
    if not isinstance(value, Mapping):
        raise StackFormatError(f"{where} must be an object, not {_json_type(value)}")
    return value


def need_list(value: object, where: str) -> list[Any]:
    """``value`` as a JSON array, or a ``StackFormatError``."""
    if not isinstance(value, list):
        raise StackFormatError(f"{where} must be an array, not {_json_type(value)}")
    return value


def need_str(entry: Mapping[str, Any], key: str, where: str) -> str:
    """``entry[key]`` as a clean string (``clean_text``); a missing or mistyped one raises."""
    value = entry.get(key)
    if not isinstance(value, str):
        raise StackFormatError(f"{where}: {key!r} must be a string, not {_json_type(value)}")
    return clean_text(value)


def maybe_str(
    entry: Mapping[str, Any], key: str, where: str, *, one_line: bool = False
) -> str | None:
    """``entry[key]`` as a clean string (``clean_text``), None when missing or null; another
    type raises."""
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise StackFormatError(
            f"{where}: {key!r} must be a string or null, not {_json_type(value)}"
        )
    return clean_text(value, one_line=one_line)


def need_bool(
    entry: Mapping[str, Any], key: str, where: str, *, default: bool | None = None
) -> bool:
    """``entry[key]`` as a boolean; a missing one is ``default`` where there is one, else it
    raises like a mistyped one (``1`` is not true here, nor is null)."""
    if key not in entry and default is not None:
        return default
    value = entry.get(key)
    if not isinstance(value, bool):
        raise StackFormatError(f"{where}: {key!r} must be a boolean, not {_json_type(value)}")
    return value


def need_int(
    entry: Mapping[str, Any], key: str, where: str, *, low: int, end: int, strings: bool = False
) -> int:
    """``entry[key]`` as an integer in ``[low, end)``. A boolean, a float or one out of range
    raises; so does a string, unless ``strings`` (an int64 in the service's JSON travels as a
    decimal string)."""
    value = entry.get(key)
    number = as_int(value) if strings else value
    if isinstance(number, bool) or not isinstance(number, int):
        expected = "an integer or a decimal string" if strings else "an integer"
        raise StackFormatError(f"{where}: {key!r} must be {expected}, not {_json_type(value)}")
    if not low <= number < end:
        raise StackFormatError(f"{where}: {key!r} is out of range ({number})")
    return number


@dataclass(frozen=True)
class Spelling:
    """The keys that py-spy's JSON and the service's (camelCase) spell differently; the rest
    of a thread (``active``, ``frames``, ``name``, ``line``, ``locals``) is spelled alike, so
    one reader checks both."""

    thread_id: str
    thread_name: str
    owns_gil: str
    short_filename: str
    ids_as_strings: bool
    """Whether a thread id is a decimal string (the service's int64) rather than a number."""


PY_SPY_KEYS = Spelling("thread_id", "thread_name", "owns_gil", "short_filename", False)
WIRE_KEYS = Spelling("threadId", "name", "ownsGil", "shortFilename", True)


def _locals(raw: object, where: str) -> tuple[Local, ...] | None:
    """A frame's locals (the first ``MAX_LOCALS``); None when the dump has none (null)."""
    if raw is None:
        return None
    items = need_list(raw, f"{where}: 'locals'")
    out = []
    for index, item in enumerate(items[:MAX_LOCALS]):
        here = f"{where} local {index}"
        entry = need_mapping(item, here)
        out.append(
            Local(
                need_str(entry, "name", here),
                maybe_str(entry, "repr", here),
                need_bool(entry, "arg", here, default=False),
            )
        )
    return tuple(out)


def _frame(raw: object, where: str, keys: Spelling) -> Frame:
    """One frame; a missing short filename is the full one."""
    entry = need_mapping(raw, where)
    filename = need_str(entry, "filename", where)
    short = maybe_str(entry, keys.short_filename, where)
    return Frame(
        need_str(entry, "name", where),
        filename,
        short if short else filename,
        need_int(entry, "line", where, low=-_LINE_LIMIT, end=_LINE_LIMIT),
        _locals(entry.get("locals"), where),
    )


def _thread(raw: object, where: str, keys: Spelling) -> ThreadStack:
    """One thread; ``owns_gil`` may be missing (an older py-spy)."""
    entry = need_mapping(raw, where)
    thread_id = need_int(
        entry, keys.thread_id, where, low=0, end=_THREAD_ID_END, strings=keys.ids_as_strings
    )
    frames = need_list(entry.get("frames"), f"{where}: 'frames'")
    return ThreadStack(
        thread_id,
        maybe_str(entry, keys.thread_name, where),
        need_bool(entry, "active", where),
        need_bool(entry, keys.owns_gil, where, default=False),
        tuple(_frame(f, f"{where} frame {i}", keys) for i, f in enumerate(frames[:MAX_FRAMES])),
    )


def read_threads(
    raw: object, where: str, keys: Spelling, *, prefix: str = ""
) -> tuple[ThreadStack, ...]:
    """The first ``MAX_THREADS`` threads of an array spelled ``keys``. Errors name the array
    ``where`` and a thread ``<prefix>thread 2`` (``replica 1 thread 2 frame 5: ...``)."""
    threads = need_list(raw, where)
    return tuple(
        _thread(t, f"{prefix}thread {i}", keys) for i, t in enumerate(threads[:MAX_THREADS])
    )


def parse_dump(raw: object) -> tuple[ThreadStack, ...]:
    """The threads of one ``py-spy dump --json`` (decoded JSON), in py-spy's order.

    Raises:
        StackFormatError: ``raw`` is not an array of threads, or a thread, frame or local is
            malformed; the message names which (``thread 2 frame 5: 'line' must be an
            integer, not a string``).
    """
    return read_threads(raw, "a py-spy dump", PY_SPY_KEYS)
