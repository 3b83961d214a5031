"""What a failed replica's errorMessage shows from its stderr: the last exception, whatever shape
its traceback has.

The platform's errorMessage was "The replica worker 1 exited with a non-zero status of 1." and
the traceback; what a user needs from it is the exception line (``ValueError: ...``). Keeping the
start and the end of the last traceback loses exactly that line in two common shapes:

- TensorFlow's errors carry a long message after the exception line: the op's "Original stack
  trace for 'x':" frames (TF 1.x graphs, ``tf.compat.v1``), or "Detected at node ..."
  frames before the cause (TF 2.x ``model.fit``), so the end of the text is frames, not the
  error;
- chained exceptions ("During handling of the above exception, another exception occurred:",
  "The above exception was the direct cause of the following exception:") repeat whole
  tracebacks; the process died of the last one.

So the text is parsed: the last ``Traceback (most recent call last):`` header, its frames (the
indented lines under it, carets and source lines included), then the exception line, the first
line after them that is not indented. The lines after it are the exception's message when it has
more than one line, up to a line that starts a logging record (shutdown noise such as TF's
"W tensorflow/... Error occurred when finalizing GeneratorDataset iterator") or another
traceback. The summary keeps the header, the innermost frames, the exception line, and the
start and end of a long message; without any traceback, the last lines. torch.distributed's
``[rankN]: `` prefix on every line of a rank's traceback is taken off first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tui_app.model.logs.log_records import TRACEBACK_START, is_record_start, strip_rank

__all__ = ["ParsedTraceback", "error_summary", "last_traceback"]

MAX_LINE_CHARS: Final = 500
FRAME_LINES: Final = 6
"""Innermost frame lines kept (about three frames: the ``File`` line and its source)."""
MESSAGE_HEAD: Final = 3
MESSAGE_TAIL: Final = 4
"""A long exception message keeps its first and last lines: TF 1.x puts the cause first and
the original stack trace after it, TF 2.x the node's stack first and the cause last."""
TAIL_LINES: Final = 12
"""Without a traceback: the last lines (a ``usage:`` error, ``sys.exit("...")``, a C++ abort)."""
ELLIPSIS: Final = "  ..."

# An exception line: a (dotted) class name, then ": message" or nothing ("KeyboardInterrupt").
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(?::\s|:$|$)")
_IGNORED = "Exception ignored in"


@dataclass(frozen=True)
class ParsedTraceback:
    """The last traceback of a text, as line lists (blank lines dropped)."""

    frames: list[str]
    """The lines between the header and the exception line."""
    exception: str
    """The exception line, e.g. ``ValueError: bad value``."""
    message: list[str]
    """The lines after the exception line that belong to its message."""


def _starts_traceback(line: str) -> bool:
    return line.startswith(TRACEBACK_START)


def _is_exception_line(line: str) -> bool:
    return (
        bool(line)
        and not line[0].isspace()
        and bool(_EXCEPTION_LINE.match(line))
        and not is_record_start(line)
    )


def last_traceback(lines: list[str]) -> ParsedTraceback | None:
    """The last traceback in ``lines`` (non-blank lines of a stderr tail), or None; torch's
    ``[rankN]: `` prefixes are taken off.

    A traceback whose exception line never came (the process was killed while printing it)
    counts as none, so the caller shows the last lines instead.
    """
    lines = [strip_rank(line) for line in lines]
    starts = [i for i, line in enumerate(lines) if _starts_traceback(line)]
    if not starts:
        return None
    # Tracebacks Python prints at exit for errors it then ignores (a __del__ that failed while
    # the interpreter was shutting down) come after the one the process died of.
    fatal = [i for i in starts if i == 0 or not lines[i - 1].startswith(_IGNORED)]
    start = (fatal or starts)[-1]
    exc_at = None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line or line[0].isspace():
            continue  # a frame, its source line, a caret line
        if _is_exception_line(line):
            exc_at = i
            break
        # An unindented line that is no exception (a log line another thread wrote in the
        # middle of the frames): skip it and keep looking.
    if exc_at is None:
        return None
    frames = [ln for ln in lines[start + 1 : exc_at] if ln and ln[0].isspace()]
    message: list[str] = []
    for line in lines[exc_at + 1 :]:
        if _starts_traceback(line) or line.startswith(_IGNORED) or is_record_start(line):
            break
        message.append(line)
    return ParsedTraceback(frames, lines[exc_at], message)


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 3] + "..."


def error_summary(text: str) -> str:
    """The part of a failed replica's stderr that goes into errorMessage ("" for none).

    With a traceback: its header, ``  ...`` where frames were left out, the innermost frames,
    the exception line, and the exception's message (its first and last lines when long). The
    exception line is always there, whatever the lengths. Without one: the last lines.
    """
    # torch.distributed prefixes each line of an uncaught exception with "[rankN]: "; the
    # replica is named in errorMessage's first line already.
    lines = [strip_rank(ln).rstrip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    parsed = last_traceback(lines)
    if parsed is None:
        tail = lines[-TAIL_LINES:]
        picked = ([ELLIPSIS] if len(lines) > TAIL_LINES else []) + tail
        return "\n".join(_cut(ln) for ln in picked)
    out = [TRACEBACK_START]
    if len(parsed.frames) > FRAME_LINES:
        out.append(ELLIPSIS)
    out += parsed.frames[-FRAME_LINES:]
    out.append(parsed.exception)
    message = parsed.message
    if len(message) > MESSAGE_HEAD + MESSAGE_TAIL:
        out += [*message[:MESSAGE_HEAD], ELLIPSIS, *message[-MESSAGE_TAIL:]]
    else:
        out += message
    return "\n".join(_cut(ln) for ln in out)
