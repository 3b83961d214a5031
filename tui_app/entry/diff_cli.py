"""``tui-app jobs diff A B``: what differs between two jobs (being built: issue 27)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_app.api.connection import Connection

TROUBLE = 2


def diff_command(args: argparse.Namespace, connection: Connection, project: str) -> int:
    print("error: jobs diff is not built yet", file=sys.stderr)
    return TROUBLE
