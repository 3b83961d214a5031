"""``tui-app jobs diff A B``: what differs between two jobs, as ``diff -u`` of their YAML.

Each side is a job id as the other commands take it (whole, or a prefix only one job id starts
with), ``projects/P/jobs/ID`` for a job of another project, or ``JOB/TRIAL`` (also
``projects/P/jobs/ID/TRIAL``) for one trial of a tuning job. Two jobs are compared as
``model.job_diff.comparison_document`` has them (the request, the packages by content hash,
the runtime, the outcome, the last metrics); two trials as ``trial_document``.

What a job that has not started (QUEUED, PREPARING) cannot tell yet, its packages' bytes and its
runtime, reads "not known yet" in its document; the JSON lists those fields apart
(``notKnownYet``), not among the differences, and the unified diff, which shows the documents
as they are, comes with a note on stderr saying that those lines are no difference.

Exit status as diff(1) has it: 0 the same, 1 they differ, 2 trouble (an id that names no job or
several, a refusal of the server, a trial the job does not have) and 130 on ctrl+c. An unknown
id must not read as "they differ": it is 2, with the ids most like it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tui_app.api.errors import ApiCallError
from tui_app.entry.cli_common import JobFinder, Refused, error_lines
from tui_app.model.jobs.job_id import split_job_name
from tui_app.model.jobs.wire import as_list, as_mapping
from tui_app.model.views.job_diff import (
    comparison_document,
    diff_json,
    diff_sections,
    trial_document,
    unified_diff,
)

if TYPE_CHECKING:
    from tui_app.api.connection import Connection

__all__ = ["DIFFERENT", "SAME", "TROUBLE", "Side", "diff_command", "parse_side"]

SAME = 0
DIFFERENT = 1
TROUBLE = 2
INTERRUPTED = 130


@dataclass(frozen=True)
class Side:
    """One side of the diff as typed: the project, the job id (or prefix), and a trial."""

    project: str
    job: str
    trial: str | None = None


def parse_side(text: str, project: str) -> Side:
    """``ID``, ``ID/TRIAL``, ``projects/P/jobs/ID`` or ``projects/P/jobs/ID/TRIAL``.

    Raises:
        Refused: the text is none of these (exit 2).
    """
    text = text.strip()
    try:
        project, rest = split_job_name(text, project)
    except ValueError:
        raise Refused(
            f"{text!r}: a job of another project is projects/PROJECT/jobs/JOB_ID "
            "(a trial: projects/PROJECT/jobs/JOB_ID/TRIAL)",
            TROUBLE,
        ) from None
    parts = rest.split("/")
    if len(parts) > 2 or not all(parts):
        raise Refused(
            f"{text!r} is not a job id: JOB_ID, JOB_ID/TRIAL or projects/PROJECT/jobs/JOB_ID",
            TROUBLE,
        )
    return Side(project, parts[0], parts[1] if len(parts) == 2 else None)


def diff_command(args: argparse.Namespace, connection: Connection, project: str) -> int:
    """Print what differs between ``args.job_a`` and ``args.job_b`` as ``args.format`` says.

    Returns:
        The exit status: ``SAME``, ``DIFFERENT``, ``TROUBLE`` or 130.
    """
    try:
        return _diff(args, connection, project)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return TROUBLE
    except ApiCallError as exc:
        print("\n".join(error_lines(exc)), file=sys.stderr)
        return TROUBLE
    except BrokenPipeError:
        # The reader went away (``| head``): the status still says what the diff found.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return DIFFERENT


def _diff(args: argparse.Namespace, connection: Connection, project: str) -> int:
    left, right = parse_side(args.job_a, project), parse_side(args.job_b, project)
    if (left.trial is None) != (right.trial is None):
        raise Refused(
            "compare two jobs (JOB_ID) or two trials (JOB_ID/TRIAL), not a job with a trial",
            TROUBLE,
        )
    finders: dict[str, JobFinder] = {}

    def find(side: Side) -> dict[str, Any]:
        if side.project not in finders:
            finders[side.project] = JobFinder(connection.jobs(side.project))
        try:
            return finders[side.project].find(side.job)
        except Refused as exc:
            # The finder's "no such job" is the other commands' 1; here 1 means "they differ".
            raise Refused(str(exc), TROUBLE) from None

    # Both ids are found before anything else is read: a typo costs one list, not a metrics read.
    job_a, job_b = find(left), find(right)
    name_a = _name(left, job_a)
    name_b = _name(right, job_b)
    same = name_a == name_b
    if same:
        what = "trial" if left.trial is not None else "job"
        print(f"note: both ids name the same {what} ({name_a})", file=sys.stderr)
    if left.trial is not None and right.trial is not None:
        _check_trial(job_a, left.trial)
        _check_trial(job_b, right.trial)
        doc_a = trial_document(job_a, left.trial, left.project)
        doc_b = doc_a if same else trial_document(job_b, right.trial, right.project)
    else:
        from tui_app.api.job_compare import gather_facts

        now = datetime.now(UTC)
        doc_a = comparison_document(gather_facts(connection, left.project, job_a), now)
        if same:
            doc_b = doc_a
        else:
            doc_b = comparison_document(gather_facts(connection, right.project, job_b), now)
    if args.format == "json":
        found = diff_json(doc_a, doc_b, name_a, name_b)
        sys.stdout.write(json.dumps(found, indent=2, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return SAME if found["equal"] else DIFFERENT
    text = unified_diff(doc_a, doc_b, name_a, name_b)
    if text:
        _write(text, sys.stdout.isatty())
        pending = sum(len(s.pending) for s in diff_sections(doc_a, doc_b))
        if pending:
            # The lines say "not known yet"; the note says they are no difference.
            print(
                f"note: {pending} field{'' if pending == 1 else 's'} not known yet (a job "
                "that has not started: its packages' bytes, its runtime), not differences",
                file=sys.stderr,
            )
    return DIFFERENT if text else SAME


def _name(side: Side, job: dict[str, Any]) -> str:
    """``project/job_id`` (``/trial`` for a trial): what ``---`` and ``+++`` name."""
    name = f"{side.project}/{job.get('jobId')}"
    return f"{name}/{side.trial}" if side.trial is not None else name


def _check_trial(job: dict[str, Any], trial_id: str) -> None:
    trials = [
        str(as_mapping(t).get("trialId"))
        for t in as_list(as_mapping(job.get("trainingOutput")).get("trials"))
    ]
    if trial_id not in trials:
        have = ", ".join(trials) if trials else "none yet"
        raise Refused(f"{job.get('jobId')} has no trial {trial_id!r} (trials: {have})", TROUBLE)


def _write(text: str, terminal: bool) -> None:
    """The diff; on a terminal each line through the TUI's cleaner, as ``jobs logs`` does: a
    job's args or error text could otherwise retitle or clear the user's terminal."""
    if terminal:
        from tui_app.model.logs.log_text import clean

        lines = text.split("\n")
        text = "\n".join("\t".join(clean(p).text for p in line.split("\t")) for line in lines)
    sys.stdout.write(text)
    sys.stdout.flush()
