"""Child processes that get ctrl-c as they would from a terminal."""

from __future__ import annotations

import signal


def sigint_as_in_a_terminal() -> None:
    """``preexec_fn`` for a command a test interrupts with SIGINT.

    A suite started in the background (``cmd &`` from a script, as CI runners and ``nohup`` do)
    runs with SIGINT ignored; a child inherits that, and Python keeps an inherited SIG_IGN
    instead of raising KeyboardInterrupt, so the command never sees the test's ctrl-c. In a
    terminal it would.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
