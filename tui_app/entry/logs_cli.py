"""``tui-app logs search QUERY``: the TUI's search over every job's logs (``:grep``), for scripts.

The query is read as the TUI reads it (``model.logs.log_search``: text is a case-insensitive
substring, ``SEARCH(...)`` or a field term is a Logging filter as typed), and the hits come
newest first from one ``entries:list`` over the project at a time (``api.log_search``).

Output: text grouped by job as the TUI groups it (a header line per job, then ``TIME  TASK
LINE``, times in UTC), or ``--format json``, a list of entries. ``--context N`` adds the N lines
before and after each hit in its replica's log.

Exit status, as the ``jobs`` commands': 0 done (no hit is not an error: nothing is printed, and
stderr says so in text form), 1 the server refused or did not answer, 2 the command line cannot
be used (a query the server calls INVALID_ARGUMENT, a bad ``--since``), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial
from typing import Any

from tui_app.api.errors import ApiCallError
from tui_app.config.settings import Settings
from tui_app.entry.cli_common import REFUSED, USAGE, exit_status
from tui_app.entry.launch import connector, resolve
from tui_app.model.logs.log_line import LogLine
from tui_app.model.logs.log_search import (
    SearchHit,
    group_by_job,
    search_filter,
    since_term,
    with_window,
)
from tui_app.model.logs.severity import severity_name
from tui_app.model.notify.durations import DURATION_FORMS, parse_duration_seconds

__all__ = ["run_logs_command"]

Context = tuple[list[LogLine], list[LogLine]]
"""A hit's lines before and after it, each oldest first."""


def run_logs_command(args: argparse.Namespace, settings: Settings) -> int:
    """``tui-app logs ...`` (only ``search`` so far); the exit status (module doc)."""
    if args.action != "search":
        return USAGE
    try:
        return exit_status(partial(_search, args, settings), _failed_search)
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, and keep Python's final flush quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _failed_search(exc: ApiCallError) -> int:
    # The server could not read the query: the command line is what must change.
    return USAGE if exc.status == "INVALID_ARGUMENT" else REFUSED


def _search(args: argparse.Namespace, settings: Settings) -> int:
    from tui_app.api.log_search import LogSearch
    from tui_app.model.filters.job_scope import JobScope
    from tui_app.model.filters.list_filter import parse_list_filter
    from tui_app.model.views.job_view import JobRow

    query = search_filter(args.query)
    if not query:
        print("error: QUERY is empty: give the text to search for.", file=sys.stderr)
        return USAGE
    window = ""
    if args.since is not None:
        seconds = parse_duration_seconds(args.since)
        if seconds is None or seconds <= 0:
            why = f"error: --since {args.since!r}: give a duration, {DURATION_FORMS}."
            print(why, file=sys.stderr)
            return USAGE
        window = since_term(datetime.now(UTC), seconds)
    jobs_filter = None
    if args.filter:
        jobs_filter = parse_list_filter(args.filter)
        if jobs_filter.error:
            print(f"error: --filter: {jobs_filter.error}", file=sys.stderr)
            return USAGE
    profile, project, state_dir = resolve(args, settings)
    connection = connector(profile, state_dir)()
    search = LogSearch(connection, project)
    wanted: frozenset[str] | None = None
    if jobs_filter is not None:
        # The job list's filter (what the list shows with it), as the jobs it keeps.
        rows = [JobRow.from_job(j) for j in connection.jobs(project).list_jobs()]
        wanted = JobScope(jobs_filter).jobs(rows)
    hits: list[SearchHit] = []
    token: str | None = None
    for page in search.pages(with_window(query, window), args.limit, wanted):
        hits += page.hits
        token = page.next_page_token
    if len(hits) > args.limit:
        hits, token = hits[: args.limit], token or "more"
    contexts = [search.context(hit, args.context) for hit in hits] if args.context else None
    if args.format == "json":
        print(json.dumps(_json_hits(hits, contexts), indent=2))
    elif hits:
        out = "\n".join(_text_lines(hits, contexts, safe=sys.stdout.isatty()))
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    else:
        print("No line matches.", file=sys.stderr)
    if token is not None:
        print(f"More lines may match than the {args.limit} shown (--limit).", file=sys.stderr)
    return 0


def _entry(job_id: str, line: LogLine) -> dict[str, Any]:
    """A line as ``--format json`` writes it."""
    return {
        "job_id": job_id,
        "task_name": line.task_name,
        "trial_id": line.trial_id,
        "timestamp": line.timestamp,
        "severity": severity_name(line.severity),
        "message": line.text,
    }


def _json_hits(hits: list[SearchHit], contexts: list[Context] | None) -> list[dict[str, Any]]:
    """The hits newest first; with ``--context``, each with ``before`` and ``after`` lists of
    the same shape, oldest first."""
    out = []
    for i, hit in enumerate(hits):
        item = _entry(hit.job_id, hit.line)
        if contexts is not None:
            before, after = contexts[i]
            item["before"] = [_entry(hit.job_id, line) for line in before]
            item["after"] = [_entry(hit.job_id, line) for line in after]
        out.append(item)
    return out


def _when(line: LogLine) -> str:
    """``2026-11-22 09:30:00``: the line's time in UTC to the second (the timestamps are)."""
    return f"{line.timestamp[:10]} {line.timestamp[11:19]}"


def _task(line: LogLine) -> str:
    """The replica, and its trial as ``jobs diff`` names one (``3/master-replica-0``)."""
    return f"{line.trial_id}/{line.task_name}" if line.trial_id else line.task_name


def _text_lines(
    hits: list[SearchHit], contexts: list[Context] | None, *, safe: bool = False
) -> Iterator[str]:
    """Grouped by job as the TUI groups them: ``JOB  (N hits)``, then ``TIME  TASK  LINE`` per
    hit, newest first. With context each hit is a block, its lines oldest first, the hit marked
    ``>``, blocks apart by ``--`` (grep's separator); a multi-line message gives a line each.

    With ``safe`` (a terminal), messages go through the TUI's cleaner, as ``jobs logs``'s do: a
    trainer's escape sequences would otherwise retitle or clear the user's terminal."""
    index = {id(hit): i for i, hit in enumerate(hits)}
    shown = [(hit, _task(hit.line)) for hit in hits]
    width = max(len(task) for _, task in shown)
    for n, (job_id, group) in enumerate(group_by_job(hits)):
        if n:
            yield ""
        count = f"{len(group)} hit{'s' if len(group) != 1 else ''}"
        yield f"{job_id}  ({count})"
        for k, hit in enumerate(group):
            if contexts is None:
                yield from _rows(hit.line, width, "", safe)
                continue
            if k:
                yield "--"
            before, after = contexts[index[id(hit)]]
            for line in before:
                yield from _rows(line, width, "  ", safe)
            yield from _rows(hit.line, width, "> ", safe)
            for line in after:
                yield from _rows(line, width, "  ", safe)


def _rows(line: LogLine, width: int, mark: str, safe: bool) -> Iterator[str]:
    """``TIME  TASK  LINE`` for each line of the message, after ``mark``."""
    head = f"{mark}{_when(line)}  {_task(line).ljust(width)}  "
    for part in line.text.splitlines() or [""]:
        if safe:
            from tui_app.model.logs.log_text import clean

            part = clean(part).text
        yield (head + part).rstrip()
