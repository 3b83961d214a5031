"""``tui-app jobs stacks JOB``: every replica's Python threads, folded, for a terminal or a
script.

The text is the stacks view's (``tui_app.model.stacks.render_text``): one section per group of
replicas whose stacks are the same. ``--format json`` prints the service's ``:stacks`` answer.
Exit 1 when the service refuses (the job runs no replica, or not the one named, or never
stalled for ``--at-stall``); the message says which.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from tui_app.entry.cli_common import REFUSED
from tui_app.model.stacks import NO_STACKS_ENDPOINT, fold, render_text

if TYPE_CHECKING:
    from tui_app.api.connection import Connection


def stacks_command(
    args: argparse.Namespace, connection: Connection, project: str, job: dict[str, Any]
) -> int:
    """Print the stacks of ``job`` (found by the caller) as ``args.format`` says."""
    job_id = str(job["jobId"])
    with connection.metrics(project) as client:
        got = client.stacks(
            job_id,
            replica=args.replica,
            trial=args.trial,
            with_locals=args.locals,
            at_stall=args.at_stall,
        )
    if got is None:
        print(f"error: {NO_STACKS_ENDPOINT}", file=sys.stderr)
        return REFUSED
    if args.format == "json":
        print(json.dumps(got.to_json(), indent=2))
        return 0
    when = "kept when the job stalled, taken" if args.at_stall else "taken"
    print(f"Stacks of {job_id}, {when} {got.taken_at}:")
    print()
    print("\n".join(render_text(fold(got.replicas), locals=got.locals)))
    return 0
