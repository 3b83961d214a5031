"""The ``tui-app`` command line.

``tui-app service ...`` manages the local jobs service; ``tui-app --demo`` starts it if needed and
submits the sample jobs (once: ``--demo --again`` submits a new set); ``tui-app jobs ...`` and
``tui-app logs search`` are the TUI's views for scripts. Heavy imports happen
inside the commands that need them, so the supervisor-free paths (``service status``,
``service env``) answer instantly.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from tui_app import __version__
from tui_app.config.executors import DEFAULT_EXECUTOR, runs_here
from tui_app.local.paths import StateDir, default_state_dir
from tui_app.model.jobs.engine_label import engine_label

if TYPE_CHECKING:
    from tui_app.local.service_cli import ServiceOptions


def _state(args: argparse.Namespace) -> StateDir:
    return StateDir(Path(args.state_dir).expanduser() if args.state_dir else default_state_dir())


# The connection options are accepted before the subcommand (``tui-app --project X jobs list``)
# and after it (``tui-app jobs list --project X``). A subcommand's copy has no default of its own
# (SUPPRESS): argparse would otherwise overwrite the value given before the subcommand with the
# subcommand's default, and the option would be silently ignored.


def _add_state_dir(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    p.add_argument(
        "--state-dir",
        default=None if top else argparse.SUPPRESS,
        help="the service's state dir (default: $TUI_APP_STATE_DIR or ~/.local/share/tui-app)",
    )


def _add_connection(p: argparse.ArgumentParser, *, top: bool = False) -> None:
    _add_state_dir(p, top=top)
    default = None if top else argparse.SUPPRESS
    p.add_argument(
        "--project", default=default, help="project id (default: settings, else local-project)"
    )
    p.add_argument(
        "--profile", default=default, help="backend profile from settings.yaml (default: local)"
    )


def _add_format(p: argparse.ArgumentParser, helptext: str, *, plain: str = "text") -> None:
    """``--format``: ``plain`` (the default) or ``json``, as every command that prints data."""
    p.add_argument("--format", choices=(plain, "json"), default=plain, help=helptext)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds: {text!r}")
    return value


_JOBS_EXIT_CODES = """exit status:
  0  done
  1  the server refused (NOT_FOUND, FAILED_PRECONDITION, ...), or what was named does not
     exist (a job id, a replica); an unknown job id is answered with the ids most like it
  2  the command line cannot be used as given: a bad option, a --filter the list cannot
     read, a JOB_ID prefix that several jobs start with (they are listed)
  130  interrupted (ctrl+c)"""


_DIFF_EXIT_CODES = """exit status (as diff(1)):
  0  the two jobs are the same in every field compared (or both ids name one job)
  1  they differ
  2  trouble: a JOB_ID that names no job or several, the server refused, a bad option
  130  interrupted (ctrl+c)"""

_WAIT_EXIT_CODES = """exit status (by outcome; with several jobs the first that applies):
  0  every job waited for SUCCEEDED (with --any: the first to end did)
  1  the server refused, or a JOB_ID names no job (nothing was waited for)
  2  the command line cannot be used as given (a bad --timeout, an ambiguous prefix)
  3  a job FAILED
  4  a job was CANCELLED
  124  --timeout ran out before the jobs ended (as timeout(1))
  130  interrupted (ctrl+c)"""


def _add_diff_and_wait(jsub: Any) -> None:
    """``jobs diff`` and ``jobs wait``: their exit statuses are not the other commands' (diff's
    1 means "they differ"; wait's say how the jobs ended), so each has its own table."""
    prefix = "a job id, or a prefix only one job id starts with"
    p = jsub.add_parser(
        "diff",
        help="what differs between two jobs, as diff -u of their YAML",
        description=textwrap.fill(
            "What differs between two jobs: a unified diff (diff -u) of their YAML, followed "
            "by what the service recorded of each run (the trainer packages by content hash, "
            "the runtime's framework versions) and the outcome (state, duration, ML units, "
            "metrics, the cause of a failure). A JOB_ID may be projects/P/jobs/ID to compare "
            "jobs of two projects. TRIAL ids (JOB_ID/TRIAL) compare two trials of one job.",
            79,
        ),
        epilog=_DIFF_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_connection(p)
    p.add_argument("job_a", metavar="A", help=prefix)
    p.add_argument("job_b", metavar="B", help=prefix)
    _add_format(
        p,
        "text (default: unified diff) or json (the differences field by field)",
    )
    p = jsub.add_parser(
        "wait",
        help="block until jobs end; the exit status says how they ended",
        description=textwrap.fill(
            "Block until every JOB_ID has ended (with --any: the first one), printing each "
            "one's end state and cause as it happens, and a one-line progress on stderr when "
            "stderr is a terminal. A job that has already ended is reported at once. A JOB_ID "
            "may be projects/P/jobs/ID to wait for a job of another project.",
            79,
        ),
        epilog=_WAIT_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_connection(p)
    p.add_argument("job_ids", nargs="+", metavar="JOB_ID", help=prefix)
    p.add_argument("--any", action="store_true", help="return when the first job ends")
    p.add_argument(
        "--timeout",
        metavar="DURATION",
        help="give up after this long (exit 124): 90, 90s, 15m, 2h, 1h30m",
    )
    p.add_argument(
        "--notify",
        action="store_true",
        help="when a job ends, ring the terminal's bell and raise a desktop notification "
        "through the terminal, as the TUI's w does (settings.yaml's notify: applies)",
    )


_LOGS_EXIT_CODES = """exit status:
  0  done (no line matches is not an error: nothing is printed, and stderr says so)
  1  the server refused or did not answer
  2  the command line cannot be used as given: a QUERY the server cannot read
     (INVALID_ARGUMENT: Invalid filter: ...), a bad --since or other option
  130  interrupted (ctrl+c)"""


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def _positive_int(text: str) -> int:
    value = _non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {text!r}")
    return value


def _add_logs(sub: Any) -> None:
    """``logs search``: the TUI's search over every job's logs (``:grep``), for scripts."""
    logs = sub.add_parser(
        "logs",
        help="every job's logs without the TUI, for scripts",
        description="Every job's logs at once, as the TUI's :grep searches them.",
    )
    lsub = logs.add_subparsers(dest="action", required=True)
    p = lsub.add_parser(
        "search",
        help="the lines of every job that hold a text, newest first, grouped by job",
        description=textwrap.fill(
            "The lines of every job of the project that match QUERY, newest first, grouped by "
            "job, as the TUI's :grep shows them. QUERY is text (a case-insensitive substring, "
            'sent as Cloud Logging\'s "..." search) unless it starts with SEARCH( (whole '
            'words; SEARCH("`a phrase`") for adjacent words) or " (a quoted text), or holds a '
            'field term such as severity>=ERROR or textPayload:"...": then it is a Logging '
            "filter, sent as typed. Text output is one header line per job, then "
            "TIME  TASK  LINE per hit (UTC; a trial's replica as TRIAL/TASK).",
            79,
        ),
        epilog=_LOGS_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_connection(p)
    p.add_argument("query", metavar="QUERY", help="the text to find, or a Logging filter")
    p.add_argument(
        "--filter",
        metavar="LIST-FILTER",
        help="only the jobs the job list shows with this filter: its words, state:, label: "
        "(as `tui-app jobs list --filter`)",
    )
    p.add_argument(
        "--since",
        metavar="DURATION",
        help="only lines of the last DURATION: 90s, 15m, 2h, 7d, 1h30m (default: all)",
    )
    _add_format(
        p,
        "text (default: grouped by job) or json (a list of entries: job_id, task_name, "
        "trial_id, timestamp, severity, message; with --context, each has before and after)",
    )
    p.add_argument(
        "--context",
        type=_non_negative_int,
        default=0,
        metavar="N",
        help="also N lines before and after each hit, from that job's replica (default 0)",
    )
    p.add_argument(
        "--limit",
        type=_positive_int,
        default=100,
        metavar="N",
        help="at most N hits, the newest (default 100); stderr says when more may match",
    )


COMMANDS = frozenset({"jobs", "logs", "service"})
"""The subcommands: a command line with one of them goes straight to the whole parser (one
missing here works all the same: the TUI's parser refuses the word, and the whole one reads it)."""


class _NotTheTui(Exception):
    """The TUI's own parser cannot take this command line (``main`` asks the whole one)."""


class _TuiParser(argparse.ArgumentParser):
    """The top level alone, which raises where the whole parser would say what is wrong."""

    def error(self, message: str) -> NoReturn:
        raise _NotTheTui(message)


def build_parser(service_flags: bool = True, commands: bool = True) -> argparse.ArgumentParser:
    """The whole command line; without ``service_flags``, ``service start|run`` take none of
    their flags: those come from the service's own module, whose imports (the executors,
    psutil, the container engine's rules) cost a start of the TUI some 60 ms it does not use
    (``main`` asks for them only when ``service`` is on the command line).

    Without ``commands``: only the TUI's own flags, no subcommand, and errors raised as
    ``_NotTheTui``. argparse looks every parser's words up in gettext's catalogues, a few
    file lookups each: the subcommands' fifty parsers took about 10 ms of the TUI's start.
    """
    from tui_app.config.settings import DEFAULT_PROJECT

    parser = (argparse.ArgumentParser if commands else _TuiParser)(
        prog="tui-app",
        description="A keyboard-driven job manager for AI Platform Training (ml v1) jobs.",
        add_help=commands,  # help lists the subcommands: the whole parser gives it
    )
    parser.add_argument("--version", action="version", version=f"tui-app {__version__}")
    parser.add_argument(
        "--demo",
        action="store_true",
        help=(
            "start the local service if needed, submit sample jobs, then open the TUI; when "
            "the demo's jobs are on the service already, open the TUI on them"
        ),
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="with --demo: submit a new set of sample jobs even when the demo's are there",
    )
    _add_connection(parser, top=True)
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command")

    jobs = sub.add_parser(
        "jobs",
        help="the job list without the TUI, for scripts",
        description=textwrap.fill(
            "The TUI's job list and actions, for scripts. A JOB_ID may be a prefix that only "
            "one job id starts with, as in the TUI's :describe and :logs.",
            79,
        ),
        epilog=_JOBS_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    jsub = jobs.add_subparsers(dest="action", required=True)

    def job_command(name: str, helptext: str, what: str) -> argparse.ArgumentParser:
        sp = jsub.add_parser(
            name,
            help=helptext,
            # The raw formatter keeps the epilog's table; the description is wrapped here.
            description=textwrap.fill(f"{helptext[0].upper()}{helptext[1:]}. {what}", 79),
            epilog=_JOBS_EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_connection(sp)
        return sp

    p = job_command(
        "list",
        "every job, sorted as the TUI sorts them",
        "--filter takes the TUI's / filter or gcloud's --filter terms for the fields the "
        "TUI's filter covers; any other filter is refused (exit 2), never an empty list.",
    )
    p.add_argument("--json", action="store_true", help="the Job resources as JSON")
    p.add_argument(
        "--filter",
        metavar="FILTER",
        help="the TUI's filter: words (a regex over the row), state:X[,Y], label:K[=V], a "
        "leading ! inverts; or gcloud's: state=FAILED, state:FAILED, labels.owner=demo, "
        "labels.owner:demo, labels:owner, jobId=ID, jobId:mnist*, joined by AND, OR between "
        "terms of one field, NOT before a state term or the whole filter. Unknown states and "
        "terms the list cannot express exit 2, naming what is accepted",
    )
    prefix = "a job id, or a prefix only one job id starts with"
    p = job_command(
        "describe",
        "one job, as gcloud ai-platform jobs describe --summarize",
        "An unknown JOB_ID exits 1 with the ids most like it; a prefix several jobs start "
        "with exits 2, listing them.",
    )
    p.add_argument("job_id", metavar="JOB_ID", help=prefix)
    p.add_argument("--json", action="store_true", help="the Job resource as JSON")
    p.add_argument("--yaml", action="store_true", help="the Job resource as YAML")
    p = job_command(
        "cancel",
        "cancel jobs",
        "Every JOB_ID is found before any job is cancelled: one that names no job (exit 1) "
        "or several (exit 2) cancels nothing. A job that cannot be cancelled (it has ended) "
        "is said and the others are still cancelled (exit 1).",
    )
    p.add_argument("job_ids", nargs="+", metavar="JOB_ID", help=prefix)
    p = job_command(
        "resubmit",
        "submit a job again under a new timestamped id",
        "Prints the new id on stdout.",
    )
    p.add_argument("job_id", metavar="JOB_ID", help=prefix)
    p = job_command(
        "logs",
        "a job's logs, as gcloud ai-platform jobs stream-logs prints them",
        "A --task-name the job has no replica of exits 1, naming the replicas it has.",
    )
    p.add_argument("job_id", metavar="JOB_ID", help=prefix)
    p.add_argument(
        "--task-name",
        help="only this replica's lines, e.g. master-replica-0, worker-replica-1 (or service: "
        "the service's own lines about the job)",
    )
    p.add_argument(
        "--follow",
        action="store_true",
        help="keep printing new lines until the job has ended and its logs are drained",
    )
    p.add_argument(
        "--polling-interval",
        type=_positive_seconds,
        default=None,
        metavar="S",
        help="with --follow: seconds between polls (default 1; 5 on Vertex AI, for its quota)",
    )
    p.add_argument(
        "--raw",
        action="store_true",
        help="write trainers' text as it is, escape sequences included (on a terminal they "
        "are otherwise defused, as in the TUI; a pipe always gets it raw)",
    )
    p = job_command(
        "metrics",
        "a job's scalar series, as the TUI's metrics view (M) reads them",
        "One row per point: step, wall time, value, run, tag and source (events: TensorFlow "
        "event files under the job's output folder; hypertune: each trial's reports; logs: "
        "metrics the chief printed, when it wrote no event files), and the trial for a tuning "
        "job. A --tag the job has no series of exits 2, naming the tags it has.",
    )
    p.add_argument("job_id", metavar="JOB_ID", help=prefix)
    p.add_argument("--trial", metavar="N", help="only this trial of a tuning job")
    p.add_argument("--tag", metavar="T", help="only this tag, e.g. epoch_loss")
    _add_format(
        p,
        "csv (default; a header row, non-finite values as nan/inf) or json (one object "
        'per series, points as [step, wall_time, value]; NaN written as "NaN")',
        plain="csv",
    )
    p = job_command(
        "stacks",
        "every replica's Python stacks now, as the TUI's stacks view (S) shows them",
        "Taken by the service with py-spy, one section per replica; replicas whose stacks are "
        "the same are folded into one. Locals stay off unless --locals (they can hold "
        "secrets). Exits 1 when the job runs no replica (or not the one named).",
    )
    p.add_argument("job_id", metavar="JOB_ID", help=prefix)
    p.add_argument("--replica", metavar="NAME", help="only this replica, e.g. worker-replica-1")
    p.add_argument("--trial", metavar="N", help="only the replicas of this trial of a tuning job")
    p.add_argument("--locals", action="store_true", help="each frame's local variables too")
    p.add_argument(
        "--at-stall",
        action="store_true",
        help="the stacks the service kept when the job stalled, instead of now",
    )
    _add_format(
        p,
        "text (default: folded sections, as the TUI shows them) or json (the service's "
        ":stacks answer, one entry per replica)",
    )
    _add_diff_and_wait(jsub)
    _add_logs(sub)

    svc = sub.add_parser("service", help="manage the local jobs service")
    ssub = svc.add_subparsers(dest="action", required=True)
    for name, helptext in (
        ("start", "start the service detached and wait until it answers"),
        ("run", "run the service in the foreground"),
    ):
        p = ssub.add_parser(name, help=helptext)
        _add_state_dir(p)
        if service_flags:
            from tui_app.local.service_cli import add_run_arguments

            add_run_arguments(p)
    for name, helptext in (
        ("stop", "stop the service"),
        ("status", "say whether it runs, and where"),
    ):
        p = ssub.add_parser(name, help=helptext)
        _add_state_dir(p)
    p = ssub.add_parser("env", help="print the export lines that point gcloud at the service")
    _add_state_dir(p)
    p.add_argument(
        "--project",
        default=argparse.SUPPRESS,
        help=f"project for gcloud (CLOUDSDK_CORE_PROJECT; default {DEFAULT_PROJECT})",
    )
    return parser


def _options(args: argparse.Namespace) -> ServiceOptions:
    from tui_app.local.service_cli import ServiceOptions

    return ServiceOptions.from_args(args)


def _service(args: argparse.Namespace) -> int:
    from tui_app.local import service_cli as sc

    state = _state(args)
    try:
        if args.action == "run":
            return sc.serve(state, _options(args))
        if args.action == "start":
            already = sc.running(state)
            started = sc.start(state, _options(args))
            verb = "already running" if already else "started"
            print(f"{started.url}")
            print(
                f"Service {verb} (pid {started.pid}, state dir {state.root}, "
                f"{'token auth' if started.auth else 'no auth'}).",
                file=sys.stderr,
            )
            return 0
        if args.action == "stop":
            if sc.stop(state):
                print(f"Stopped the service of {state.root}.", file=sys.stderr)
            else:
                print(f"No service is running for {state.root}.", file=sys.stderr)
            return 0
        if args.action == "status":
            info: sc.ServiceInfo | None = sc.running(state)
            if info is None:
                print(f"stopped (state dir {state.root})")
                return 3
            health = sc.probe(info.url) or {}
            print(
                f"running at {info.url} (pid {info.pid}, "
                f"{'token auth' if info.auth else 'no auth'}, state dir {state.root})"
            )
            executor = health.get("executor")
            executor = executor if isinstance(executor, dict) else {}
            on_cluster = not runs_here(executor.get("name", DEFAULT_EXECUTOR))
            if on_cluster:
                print(f"executor: {executor.get('summary')}")
            capacity = health.get("capacity")
            if isinstance(capacity, dict) and not on_cluster:
                slots, gpus = capacity.get("slots"), capacity.get("gpus")
                print(f"capacity: {slots} CPU slots, {gpus} GPUs (one slot per replica)")
            if "containerEngine" in health:
                print(f"containers: {engine_label(health.get('containerEngine'))}")
            index = health.get("logIndex")
            if isinstance(index, dict) and isinstance(index.get("behind"), int):
                behind = index["behind"]
                text = (
                    f"{behind:,} lines being indexed in the background (searches read them "
                    "by scan meanwhile)"
                    if behind
                    else "every line indexed for search"
                )
                size, oldest = index.get("storeBytes"), index.get("oldestLine")
                if isinstance(size, int):
                    text += f"; {size / 2**20:,.1f} MiB in use"
                if isinstance(oldest, str):
                    text += f", oldest line {oldest}"
                print(f"logs: {text}")
            if isinstance(index, dict) and index.get("error"):
                print(f"warning: {index['error']}")
            if health.get("logWriterError"):
                print(f"warning: {health['logWriterError']}")
            return 0
        if args.action == "env":
            current = sc.running(state)
            if current is None:
                print(
                    f"No service is running for {state.root}; start it with "
                    f"`tui-app service start --state-dir {state.root}`.",
                    file=sys.stderr,
                )
                return 1
            print("\n".join(sc.env_lines(state, current, args.project or sc.DEFAULT_PROJECT)))
            return 0
    except sc.ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 2


def _refuse_ignored(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit with a usage error for an option the chosen command would ignore.

    An option that is accepted and then has no effect is worse than one that is refused: the
    user believes it was applied.
    """
    if args.command is not None and args.demo:
        parser.error(f"--demo opens the TUI; it cannot be combined with `{args.command}`")
    if args.again and not args.demo:
        parser.error("--again goes with --demo: `tui-app --demo --again` submits a new set")
    if args.command == "service":
        if args.profile:
            parser.error("--profile selects a backend for the TUI and `jobs`, not for `service`")
        if args.project and args.action != "env":
            parser.error(f"--project has no meaning for `service {args.action}`")


def _parse(words: list[str]) -> argparse.Namespace:
    """The command line, checked. One that names no subcommand opens the TUI, so only the
    TUI's flags are built for it; anything that parser refuses (``--help`` too) is parsed
    again by the whole one, which answers as it always has."""
    if COMMANDS.isdisjoint(words):
        tui = build_parser(commands=False)
        try:
            args = tui.parse_args(words)
            _refuse_ignored(tui, args)
        except _NotTheTui:
            pass
        else:
            return args
    parser = build_parser(service_flags="service" in words)
    args = parser.parse_args(words)
    _refuse_ignored(parser, args)
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.command == "service":
        return _service(args)
    if args.command is None:  # no subcommand: the TUI
        from tui_app.shell import start_gc

        start_gc.hold()  # the TUI: on again after its first frame
    from tui_app.config.settings import load_settings

    settings, problem = load_settings()
    if problem:
        print(f"warning: {problem}", file=sys.stderr)
    if args.command == "jobs":
        from tui_app.entry.jobs_cli import run_jobs_command

        return run_jobs_command(args, settings)
    if args.command == "logs":
        from tui_app.entry.logs_cli import run_logs_command

        return run_logs_command(args, settings)
    from tui_app.entry.launch import launch_tui

    return launch_tui(args, settings, problem)


if __name__ == "__main__":
    sys.exit(main())
