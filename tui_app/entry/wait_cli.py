"""``tui-app jobs wait JOB...``: block until jobs end (being built: issue 27)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_app.api.connection import Connection
    from tui_app.config.settings import Settings

USAGE = 2


def wait_command(
    args: argparse.Namespace, connection: Connection, project: str, settings: Settings
) -> int:
    print("error: jobs wait is not built yet", file=sys.stderr)
    return USAGE
