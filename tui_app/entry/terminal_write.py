"""Bytes for the person's terminal from a script: the bell and desktop notifications.

``tui-app jobs wait --notify`` runs with its stdout in a pipe or a file as often as not
(``jobs wait ... > log``), and a notification written there would land in the log, not on the
screen. The controlling terminal, ``/dev/tty``, is the terminal the person started the command
in whatever the redirections; stderr is the fallback when there is none (a container without
a controlling terminal whose stderr is still a terminal).
"""

from __future__ import annotations

import os
import sys

__all__ = ["write_to_terminal"]

TTY_PATH = "/dev/tty"


def write_to_terminal(text: str) -> bool:
    """Write ``text`` to the controlling terminal in one write.

    Writes to ``/dev/tty`` when it can be opened, else to stderr when that is a terminal.

    Returns:
        True when it was written to a terminal; False when there is none (cron, CI, a daemon),
        and nothing was written anywhere.
    """
    data = text.encode("utf-8")
    try:
        fd = os.open(TTY_PATH, os.O_WRONLY | os.O_NOCTTY)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            _write_all(fd, data)
            return True
        except OSError:
            pass
        finally:
            os.close(fd)
    stream = sys.stderr
    try:
        if stream is None or not stream.isatty():
            return False
        stream.flush()
        _write_all(stream.fileno(), data)
    except (OSError, ValueError):
        return False
    return True


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is out: a terminal may take a long write in pieces."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
