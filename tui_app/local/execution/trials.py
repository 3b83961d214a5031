"""Hyperparameter tuning jobs: trials, each a full set of replicas, as the platform ran them.

A job with ``trainingInput.hyperparameters`` is run by a ``TuningRunner``: admitted and prepared
like any job, then, instead of one cluster, up to ``maxTrials`` trials, at most
``maxParallelTrials`` at once. The job's own grant runs the first lane of trials; each further
lane asks the scheduler for one trial's capacity (in turn with every other job), so parallel
trials never overcommit the machine. Each trial is a ``TrialRun``: a ``JobRunner`` whose replicas
live under ``trials/<id>/``, get ``--<parameterName>=<value>``, ``TF_CONFIG.task.trial``,
``CLOUD_ML_TRIAL_ID`` and their own ``CLOUD_ML_HP_METRIC_FILE``, and whose log entries carry the
trial id. Which point each trial tries is ``tui_app.model.running.hp_search``'s business.

``trainingOutput`` is rewritten whenever a trial starts, reports or ends. The job succeeds once
the trials are done, even when some failed, unless ``maxFailedTrials`` of them failed: then it
fails, naming the count.

Every trial gets the same ``--job-dir``, as on the platform (a trainer appends the trial id from
``TF_CONFIG`` itself). The runner listens to the objects the trials' replicas write
(``RunnerHost.on_object_written``): each trial's entry gets an ``output`` field (where it wrote,
see ``tui_app.model.views.trials.TRIAL_OUTPUT_FIELD``), and trials writing files into one directory
get a warning in the job's log the moment it happens. A trial that reported nothing through
cloudml-hypertune gets its metric from the TensorFlow summary events it wrote, as the platform
read them (``tui_app.model.metrics.tf_events``); one with neither says "no metric reported".

When the service restarts under a study (a power cut), the study goes on (``_restart``): the
trials that ended stand, the ones cut off run again first with their ids and values (each replica
counting a restart under ``tui_app.model.running.restarts``), then the search asks for the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_app.local.execution.runner import JobRunner, ReplicaHandle, job_priority
from tui_app.local.execution.scheduler import LANE_MARK, Grant
from tui_app.local.execution.trial_metrics import HypertuneFeed, MetricFileError
from tui_app.local.timefmt import job_time, parse_job_time
from tui_app.local.untrusted_files import UntrustedFileError, files_beneath, read_beneath
from tui_app.model.jobs.cluster import replicas
from tui_app.model.jobs.states import JobState
from tui_app.model.jobs.tiers import Role
from tui_app.model.logs.severity import SEVERITIES
from tui_app.model.metrics.tf_events import is_event_file, scalar_series
from tui_app.model.metrics.trial_outputs import (
    parent,
    shared_directories,
    sharing_warning,
    trial_outputs,
)
from tui_app.model.running.capacity import job_demand
from tui_app.model.running.hp_search import (
    DEFAULT_METRIC_TAG,
    METRIC_HISTORY_LIMIT,
    Search,
    Suggestion,
    ThinSeries,
    arguments,
    max_failed,
    metric_history,
)
from tui_app.model.running.limits import running_limit
from tui_app.model.running.restarts import (
    Attempt,
    Cause,
    Ending,
    RestartHistory,
    Verdict,
    decide,
    restarts_resource,
    trial_line,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tui_app.local.execution.runner_host import RunnerHost
    from tui_app.local.storage.storage_env import ReplicaWriter

log = logging.getLogger(__name__)

METRIC_POLL_SECONDS = 0.25
"""How often a running trial's metric file is read (live finalMetric, early stopping)."""


def is_tuning(job: dict[str, Any]) -> bool:
    return bool((job.get("trainingInput") or {}).get("hyperparameters"))


def make_runner(host: RunnerHost, project: str, job: dict[str, Any]) -> JobRunner:
    """The runner for a job: a ``TuningRunner`` for a tuning job."""
    cls = TuningRunner if is_tuning(job) else JobRunner
    return cls(host, project, job["jobId"])


class TrialRun(JobRunner):
    """One trial: the job's replicas in their own dirs, with the trial's arguments and id."""

    def __init__(self, parent: TuningRunner, trial_id: str, extra_args: list[str]) -> None:
        super().__init__(parent.host, parent.project, parent.job_id)
        self.parent = parent
        self.trial = trial_id
        self.extra_args = extra_args
        self.stopped_early = False
        self._feed: HypertuneFeed | None = None
        self.reports = ThinSeries(METRIC_HISTORY_LIMIT)
        """Every report of the trial's metric so far, thinned (``allMetrics``)."""

    def replica_root(self) -> Path:
        return self.host.state.job_dir(self.project, self.job_id) / "trials" / str(self.trial)

    def record_runtime(self, runtime: dict[str, Any]) -> None:
        self.parent.runtime.setdefault("trials", {})[str(self.trial)] = runtime
        self.host.save_runtime(self.project, self.job_id, self.parent.runtime)

    def note(self, message: str, severity: str = "INFO") -> None:
        self.host.service_log(
            self.project,
            self.job_id,
            trial_line(str(self.trial), message),
            SEVERITIES[severity],
            self.trial,
        )

    def carry_restarts(self, restarts: dict[str, Any]) -> None:
        """Start with the restarts the trial's replicas already had (its runtime record keeps
        them when the replicas start)."""
        self._runtime = {"restarts": restarts}

    def metric_feed(self, tag: str) -> HypertuneFeed | None:
        """The chief's hypertune reports (``trial_metrics``), once the chief has started."""
        if self._feed is None:
            chief = next((h for h in self.handles if h.replica.role is Role.MASTER), None)
            if chief is not None:
                self._feed = HypertuneFeed(chief.workdir, tag)
        return self._feed

    def stop(self, state: JobState, message: str | None, early: bool = False) -> None:
        if self.cancel_requested.is_set():
            return
        self.stopped_early = early
        self.stop_reason = (state, message)  # type: ignore[assignment]
        self.cancel_requested.set()

    async def run(
        self, ti: dict[str, Any], pythonpath: Path | None, job_dir: Path | None, grant: Grant
    ) -> tuple[JobState, str | None]:
        """Start the replicas and watch them; everything is stopped and drained on return."""
        try:
            await self._start_replicas(ti, pythonpath, job_dir, grant)
            if self.cancel_requested.is_set():
                return self.stop_reason
            self.note(f"started with {' '.join(self.extra_args)}.")
            return await self._watch()
        finally:
            await self._stop_replicas()
            await self._sweep()
            await self._drain()
            await self.host.executor.release(self.run_key)


class TuningRunner(JobRunner):
    """Runs a tuning job's trials (see the module doc)."""

    places_at_admission = False

    def __init__(self, host: RunnerHost, project: str, job_id: str) -> None:
        super().__init__(host, project, job_id)
        self.runtime: dict[str, Any] = {"trials": {}}
        self.live: dict[str, TrialRun] = {}
        self.failed = 0
        self.failed_limit = 1
        self._next_id = 1
        self._output: dict[str, Any] = {}
        self._no_more = asyncio.Event()
        """Set once no further trial will start: lanes still waiting for capacity give up
        (else two tuning jobs could each hold a slot while waiting for the other's)."""
        self._writes: dict[str, set[str]] = {}
        """Trial id -> the ``gs://`` objects its replicas wrote."""
        self._dir_writers: dict[str, set[str]] = {}
        """Directory -> the trials that wrote files into it."""
        self._warned: set[str] = set()
        """Directories whose sharing the job's log has already reported."""
        self._unlisten: Callable[[], None] | None = None
        self._resumed: dict[str, Any] | None = None
        """The trainingOutput a restart of the service found (``_restart``): the study to take
        up, or None for a study that starts here."""
        self._held: dict[int, Grant] = {}
        """Lane -> the capacity its trial held when the service went down (``recover``)."""
        self._again: list[tuple[str, Suggestion]] = []
        """Trials cut off by a restart of the service, to run again first (``_resume_study``)."""

    # -- after a service restart --------------------------------------------------------------

    def recover(self, job: dict[str, Any], runtime: dict[str, Any]) -> None:
        """A study whose trials had started goes on where it was (``_restart``). What its
        running trials held is held again at once, as an adopted job's is, so that no queued
        job takes it while the service comes back (each lane of trials its own)."""
        records = runtime.get("trials") or {}
        if not records:
            return
        self.mode = "restart"
        self.runtime = runtime
        if job["state"] == JobState.CANCELLING.value:
            self.cancel_requested.set()
            return
        ti: dict[str, Any] = job["trainingInput"]
        running = [
            records[str(t.get("trialId"))]
            for t in (job.get("trainingOutput") or {}).get("trials") or ()
            if t.get("state") == JobState.RUNNING.value and str(t.get("trialId")) in records
        ]
        for lane, record in enumerate(running or [list(records.values())[-1]]):
            held = self._recorded_grant(ti, record)
            self._held[lane] = self.host.scheduler.adopt(
                self._lane_key(lane), held.demand, held.gpus
            )

    def live_replicas(self) -> list[tuple[str | None, ReplicaHandle]]:
        return [pair for run in list(self.live.values()) for pair in run.live_replicas()]

    def _lane_key(self, lane: int) -> tuple[str, str]:
        """What the scheduler calls a lane's capacity: the job's own for the first lane."""
        if lane == 0:
            return (self.project, self.job_id)
        return (self.project, f"{self.job_id}{LANE_MARK}{lane}")

    async def _restart(self) -> None:
        """The service restarted under the study (a power cut, a crash). What is left of the
        trials it ran is stopped; the finished trials stand, the cut-off ones run again with
        their ids and values (so a trainer that checkpoints under its trial's job dir resumes,
        and each replica's restart counts against the rules of model/running/restarts.py), and
        the study asks for the rest. The job stays RUNNING; maxRunningTime counts from its
        first start."""
        try:
            await self._take_up_study()
        finally:
            for lane in self._held:  # lanes that did not run: the first is the job's own
                if lane:
                    self.host.scheduler.release(self._lane_key(lane))
            self._held.clear()

    async def _take_up_study(self) -> None:
        dirs = {
            str(rep.get("dir"))
            for trial in (self.runtime.get("trials") or {}).values()
            for rep in trial.get("replicas") or ()
        }
        killed = await self.host.executor.sweep([Path(d) for d in dirs])
        for trial_id in self.runtime.get("trials") or {}:
            await self.host.executor.release((self.project, self.job_id, str(trial_id)))
        job = self.host.stored(self.project, self.job_id)
        ti: dict[str, Any] = job["trainingInput"]
        if self.cancel_requested.is_set():
            await self._stop_cut_study()
            return
        self._resumed = dict(job.get("trainingOutput") or {})
        trials = self._resumed.get("trials") or []
        done = sum(t.get("state") == JobState.SUCCEEDED.value for t in trials)
        cut = [str(t.get("trialId")) for t in trials if t.get("state") == JobState.RUNNING.value]
        again = f"; running again: trial{'s' if len(cut) != 1 else ''} {', '.join(cut)}"
        stopped = f" (stopped {killed} process{'es' if killed != 1 else ''} left of them)"
        self.note(
            "The local jobs service restarted while the tuning job ran: its study goes on with "
            f"{done} trial{'s' if done != 1 else ''} completed"
            f"{again if cut else ''}{stopped if killed else ''}.",
            "NOTICE",
        )
        grant = self._held.pop(0)
        cancelled, prepared = await self._until_cancelled(self._prepare(ti))
        if cancelled:
            await self._stop_cut_study()
            return
        if isinstance(prepared, str):
            self._finish_live_trials(JobState.FAILED)
            self.note(prepared, "ERROR")
            self.host.finish(self.project, self.job_id, JobState.FAILED, prepared)
            return
        pythonpath, job_dir = prepared
        await self._train(ti, pythonpath, job_dir, grant)

    async def _stop_cut_study(self) -> None:
        """Stopped before the study went on (a cancel, the service stopping): the cut-off
        trials end as the job does."""
        state, message = self.stop_reason
        self._finish_live_trials(state)
        await self._end(state, message)

    def _resume_study(self, search: Search) -> None:
        """Take up the study a restart of the service cut off: its finished trials teach the
        optimiser (and its failed ones count against maxFailedTrials), the cut-off ones are
        queued to run first, again, with their ids and values."""
        out = self._resumed or {}
        self._output.update({k: v for k, v in out.items() if k != "trials"})
        kept: list[dict[str, Any]] = []
        for t in out.get("trials") or []:
            entry = dict(t)
            kept.append(entry)
            trial_id = str(entry.get("trialId"))
            if trial_id.isdigit():
                self._next_id = max(self._next_id, int(trial_id) + 1)
            state = entry.get("state")
            values = entry.get("hyperparameters") or {}
            if state == JobState.RUNNING.value:
                suggestion = search.again(values)
                if suggestion is not None:
                    self._again.append((trial_id, suggestion))
                    continue
                entry["state"] = JobState.FAILED.value
                entry["endTime"] = job_time()
                state = JobState.FAILED.value
            value = (entry.get("finalMetric") or {}).get("objectiveValue")
            objective = None
            if state == JobState.SUCCEEDED.value and isinstance(value, (int, float)):
                objective = float(value)
            search.seed_trial(values, objective)
            if state == JobState.FAILED.value:
                self.failed += 1
        self._output["trials"] = kept
        self._count_completed()

    def _restarted(self, run: TrialRun) -> bool:
        """Count a cut-off trial's run again as a restart of each of its replicas (its history
        is kept with the trial's runtime record); False when one of them is out of restarts,
        and the trial fails with every attempt listed."""
        record = self.runtime.setdefault("trials", {}).setdefault(run.trial, {})
        history = RestartHistory.from_json(record.get("restarts"))
        job = self.host.stored(self.project, self.job_id)
        for replica in replicas(job["trainingInput"]):
            ending = Ending(replica.task_name, Cause.MACHINE_LOST, "its machine restarted")
            outcome = decide(history, ending, retries_allowed=False)
            if outcome.verdict is not Verdict.RESTART_REPLICA:
                run.stop_reason = (JobState.FAILED, outcome.message)
                return False
            history.attempts.append(Attempt(replica.task_name, ending.detail, job_time()))
            run.note(outcome.message, "NOTICE")
        record["restarts"] = history.as_json()
        run.carry_restarts(record["restarts"])
        self.host.save_runtime(self.project, self.job_id, self.runtime)
        self._publish_restarts()
        return True

    def _publish_restarts(self) -> None:
        """The job's ``replicaRestarts``: every trial's restarts, per replica name."""
        attempts = [
            attempt
            for record in (self.runtime.get("trials") or {}).values()
            for attempt in RestartHistory.from_json(record.get("restarts")).attempts
        ]
        attempts.sort(key=lambda a: a.at)
        self.host.set_restarts(
            self.project, self.job_id, restarts_resource(RestartHistory(attempts))
        )

    # -- running ------------------------------------------------------------------------------

    async def _train(
        self, ti: dict[str, Any], pythonpath: Path | None, job_dir: Path | None, grant: Grant
    ) -> None:
        hp: dict[str, Any] = ti["hyperparameters"]
        search = Search(hp)
        tag = str(hp.get("hyperparameterMetricTag") or DEFAULT_METRIC_TAG)
        self.failed_limit = max_failed(hp)
        parallel = max(1, int(hp.get("maxParallelTrials") or 1))
        self._output = {
            "isHyperparameterTuningJob": True,
            "hyperparameterMetricTag": tag,
            "completedTrialCount": "0",
        }
        if self._resumed is None:
            problem = self._continue_study(hp, search)
        else:
            problem = None
            self._resume_study(search)
        self._save_output()
        if problem:
            self.note(problem, "ERROR")
            await self._end(JobState.FAILED, problem)
            return
        if self._resumed is None:
            self._now_running(ti)
            self.note(
                f"Job is running: up to {search.max_trials} trials "
                f"({search.algorithm.lower()}), {parallel} at a time."
            )
        else:
            started = self.host.stored(self.project, self.job_id).get("startTime")
            self._arm(running_limit(ti), parse_job_time(started) if started else time.time())
        propagate = asyncio.ensure_future(self._propagate_cancel())
        self._unlisten = self.host.on_object_written(self._written)
        left = search.max_trials - search.seeded  # the trials run again are not seeded
        try:
            lanes = [
                self._lane(i, search, tag, ti, pythonpath, job_dir, grant if i == 0 else None)
                for i in range(max(1, min(parallel, left)))
            ]
            await asyncio.gather(*lanes)
        finally:
            propagate.cancel()
            if self._unlisten is not None:
                self._unlisten()
        if self.cancel_requested.is_set():
            state, message = self.stop_reason
        elif self.failed >= self.failed_limit:
            state = JobState.FAILED
            message = (
                f"{self.failed} trial{'s' if self.failed != 1 else ''} failed, reaching "
                f"maxFailedTrials ({self.failed_limit}); the job is stopped." + self._last_failure()
            )
        else:
            state, message = JobState.SUCCEEDED, None
            self._say_missing_metrics(tag)
        await self._end(state, message)

    def _continue_study(self, hp: dict[str, Any], search: Search) -> str | None:
        """Continue an earlier job's study: its trials count, and teach the optimiser. Returns
        why the job fails when there is no such study (a job may name one that is still to come
        from elsewhere, so create does not refuse it)."""
        previous = hp.get("resumePreviousJobId")
        if not previous:
            return None
        old = self.host.find_job(self.project, previous)
        if old is None or not is_tuning(old):
            what = "does not exist" if old is None else "is not a hyperparameter tuning job"
            return f"resumePreviousJobId: the job {previous} {what} in project {self.project}."
        trials = ((old or {}).get("trainingOutput") or {}).get("trials") or []
        kept: list[dict[str, Any]] = []
        for t in trials:
            if len(kept) >= search.max_trials:
                break
            if t.get("state") != JobState.SUCCEEDED.value:
                continue
            metric = t.get("finalMetric") or {}
            value = metric.get("objectiveValue")
            objective = float(value) if isinstance(value, (int, float)) else None
            if search.seed_trial(t.get("hyperparameters") or {}, objective):
                kept.append(dict(t, trialId=str(len(kept) + 1)))
        self._output["trials"] = kept
        self._next_id = len(kept) + 1
        self._count_completed()
        self.note(f"Resumed the study of {previous}: {len(kept)} completed trials carried over.")
        return None

    async def _propagate_cancel(self) -> None:
        await self.cancel_requested.wait()
        self._no_more.set()
        for trial in list(self.live.values()):
            trial.stop(*self.stop_reason)

    def _stopping(self) -> bool:
        return self.cancel_requested.is_set() or self.failed >= self.failed_limit

    async def _lane(
        self,
        lane: int,
        search: Search,
        tag: str,
        ti: dict[str, Any],
        pythonpath: Path | None,
        job_dir: Path | None,
        grant: Grant | None,
    ) -> None:
        """Run trials one after another on one trial's capacity until none are left."""
        key = self._lane_key(lane)
        if grant is None:
            grant = self._held.pop(lane, None)  # held over a restart of the service
        try:
            if grant is None:
                wanted = self.host.scheduler.request(key, job_demand(ti), job_priority(ti))
                give_up: asyncio.Future[Any] = asyncio.ensure_future(self._no_more.wait())
                waits: set[asyncio.Future[Any]] = {wanted, give_up}
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                give_up.cancel()
                if not wanted.done():
                    wanted.cancel()
                    return
                grant = wanted.result()
            while not self._stopping():
                if self._again:
                    trial_id, suggestion = self._again.pop(0)
                    await self._trial(
                        trial_id, suggestion, search, tag, ti, pythonpath, job_dir, grant
                    )
                    continue
                asked = None
                if self._next_id - 1 < search.max_trials:
                    asked = search.ask()
                if asked is None:
                    break
                trial_id = str(self._next_id)
                self._next_id += 1
                await self._trial(trial_id, asked, search, tag, ti, pythonpath, job_dir, grant)
            self._no_more.set()
        finally:
            if lane > 0:
                self.host.scheduler.release(key)

    async def _trial(
        self,
        trial_id: str,
        s: Suggestion,
        search: Search,
        tag: str,
        ti: dict[str, Any],
        pythonpath: Path | None,
        job_dir: Path | None,
        grant: Grant,
    ) -> None:
        run = TrialRun(self, trial_id, arguments(search.params, s.values))
        trials = self._output.setdefault("trials", [])
        entry: dict[str, Any] | None = next(
            (t for t in trials if str(t.get("trialId")) == trial_id), None
        )
        again = entry is not None  # cut off by a restart of the service: it runs again
        if entry is None:
            entry = {
                "trialId": trial_id,
                "hyperparameters": s.hyperparameters(),
                "state": JobState.RUNNING.value,
                "startTime": job_time(),
            }
            trials.append(entry)
        self._save_output()
        self.live[trial_id] = run
        ended = asyncio.Event()
        watcher = asyncio.ensure_future(self._follow_metric(run, entry, s, search, tag, ended))
        state: JobState
        message: str | None
        try:
            if again and not self._restarted(run):
                state, message = run.stop_reason
            else:
                state, message = await run.run(ti, pythonpath, job_dir, grant)
        finally:
            # Told to stop, not cancelled: a cancel in the middle of a read would drop the
            # reports its thread had just taken from the file (the feed's offset moved past
            # them), and a trial read last on a busy machine ended without its finalMetric.
            ended.set()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
            self.live.pop(trial_id, None)
        problem = await self._read_metric(run, entry, s, search, tag, to_the_end=True)
        if isinstance(problem, str) and state is not JobState.CANCELLED:
            state, message = JobState.FAILED, problem
        if entry.get("finalMetric"):
            entry.setdefault("output", {})["metricFrom"] = "hypertune"
        else:
            await self._metric_from_events(run, entry, s, search, tag)
        self._refresh_outputs()
        if run.stopped_early:
            state = JobState.SUCCEEDED
            entry["isTrialStoppedEarly"] = True
        entry["state"] = state.value
        entry["endTime"] = job_time()
        objective = (entry.get("finalMetric") or {}).get("objectiveValue")
        if state is JobState.SUCCEEDED:
            search.tell(s, "stopped" if run.stopped_early else "complete", objective)
            how = "stopped early" if run.stopped_early else "completed"
            shown = "no metric reported" if objective is None else f"{tag}={objective:g}"
            run.note(f"{how}: {shown}.")
        else:
            search.tell(s, "failed", None)
            if state is JobState.FAILED:
                self.failed += 1
                entry["_error"] = message or ""
                run.note(f"failed. {message or ''}".strip(), "ERROR")
                if self.failed >= self.failed_limit:
                    self._no_more.set()
                    for other in list(self.live.values()):
                        other.stop(JobState.CANCELLED, "maxFailedTrials reached.")
        self._count_completed()
        self._save_output()

    async def _follow_metric(
        self,
        run: TrialRun,
        entry: dict[str, Any],
        s: Suggestion,
        search: Search,
        tag: str,
        ended: asyncio.Event,
    ) -> None:
        """While the trial runs (until ``ended``): keep finalMetric current and apply early
        stopping. A read under way when the trial ends finishes first."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), METRIC_POLL_SECONDS)
            if ended.is_set():
                return
            changed = await self._read_metric(run, entry, s, search, tag)
            if isinstance(changed, str):
                run.note(f"stopped. {changed}", "ERROR")
                run.stop(JobState.FAILED, changed)
                return
            if changed:
                self._save_output()
                if search.should_stop(s):
                    run.note(
                        "stopped early: its metric is worse than the median of completed "
                        "trials at the same step.",
                        "NOTICE",
                    )
                    run.stop(JobState.SUCCEEDED, None, early=True)
                    return

    async def _read_metric(
        self,
        run: TrialRun,
        entry: dict[str, Any],
        s: Suggestion,
        search: Search,
        tag: str,
        to_the_end: bool = False,
    ) -> bool | str:
        """Take the trial's new hypertune reports (read in a worker thread, a poll's worth, or
        everything left with ``to_the_end``); True when finalMetric changed, or why the file
        cannot be followed (the trial then fails with that)."""
        feed = run.metric_feed(tag)
        if feed is None:
            return False
        points: list[tuple[int, float]] = []
        try:
            while True:
                fresh = await asyncio.to_thread(feed.poll)
                points += fresh
                # Thinned as they come, so catching up on a large file never holds it all.
                run.reports.extend(fresh)
                for step, value in fresh:
                    search.report(s, step, value)
                if not to_the_end or not feed.behind:
                    break
        except MetricFileError as exc:
            return str(exc)
        if not points:
            return False
        entry["allMetrics"] = metric_history(run.reports.points())
        step, value = points[-1]
        if not math.isfinite(value):
            return True
        metric = {"trainingStep": str(step), "objectiveValue": value}
        if entry.get("finalMetric") == metric:
            return True
        entry["finalMetric"] = metric
        return True

    # -- where trials wrote, and the metric in their summary events -------------------------

    def _written(self, writer: ReplicaWriter, bucket: str, name: str) -> None:
        """``on_object_written``: note the object; warn as soon as two trials share a folder."""
        if (writer.project, writer.job_id) != (self.project, self.job_id) or writer.trial is None:
            return
        path = f"gs://{bucket}/{name}"
        self._writes.setdefault(writer.trial, set()).add(path)
        if name.endswith("/"):
            return  # a folder placeholder: every trial's path passes through them
        writers = self._dir_writers.setdefault(parent(path), set())
        if writer.trial in writers:
            return
        writers.add(writer.trial)
        if len(writers) > 1:
            for shared in shared_directories(self._writes):
                if shared.directory not in self._warned:
                    self._warned.add(shared.directory)
                    self.note(sharing_warning(shared), "WARNING")
            self._refresh_outputs()
            self._save_output()

    def _refresh_outputs(self) -> None:
        """Each trial's ``output`` field from what its replicas wrote so far."""
        outputs = {o.trial_id: o for o in trial_outputs(self._writes)}
        shared = shared_directories(self._writes)
        for entry in self._output.get("trials") or ():
            trial_id = str(entry.get("trialId"))
            found = outputs.get(trial_id)
            if found is None:
                continue
            out = entry.setdefault("output", {})
            out.update(directory=found.directory, objects=found.objects)
            mine = [d for d in shared if trial_id in d.trials]
            if mine:
                others = {t for d in mine for t in d.trials if t != trial_id}
                out["sharedDirectory"] = mine[0].directory
                out["sharedWith"] = sorted(others, key=_trial_order)

    async def _metric_from_events(
        self, run: TrialRun, entry: dict[str, Any], s: Suggestion, search: Search, tag: str
    ) -> None:
        """No hypertune report: the metric from the summary events the trial wrote, if any."""
        files = [
            self.host.state.gcs_path(p)
            for p in sorted(self._writes.get(str(run.trial), ()))
            if is_event_file(p)
        ]
        roots = [run.replica_root()]
        job_dir = str(
            (self.host.stored(self.project, self.job_id).get("trainingInput") or {}).get("jobDir")
            or ""
        )
        if job_dir and not job_dir.startswith("gs://"):
            # A local jobDir: no storage writes to attribute, so only the trial's own
            # <jobDir>/<trialId> (the platform's idiom) is read, never the shared dir.
            roots.append(Path(job_dir.removeprefix("file://")) / str(run.trial))
        series, problems = await asyncio.to_thread(
            _event_series, self.host.state.gcs_root, files, roots, tag
        )
        for problem in problems[:3]:
            run.note(f"an event file was not read: {problem}.", "WARNING")
        if not series:
            return
        for step, value in series:
            search.report(s, step, value)
        entry["allMetrics"] = metric_history(series)
        step, value = series[-1]
        entry["finalMetric"] = {"trainingStep": str(step), "objectiveValue": value}
        entry.setdefault("output", {})["metricFrom"] = "events"
        run.note(f"{tag}={value:g} at step {step}, read from its TensorFlow summary events.")

    def _say_missing_metrics(self, tag: str) -> None:
        """The job succeeded, but some trials reported no metric: say so, and how to."""
        trials = self._output.get("trials") or []
        done = [t for t in trials if t.get("state") == JobState.SUCCEEDED.value]
        missing = [str(t.get("trialId")) for t in done if not t.get("finalMetric")]
        if not missing:
            return
        self.note(
            f"{len(missing)} of {len(done)} completed trials reported no value for the metric "
            f"{tag!r} (trial{'s' if len(missing) > 1 else ''} {', '.join(missing)}), so the "
            "study could not compare them: report it with cloudml-hypertune "
            "(report_hyperparameter_tuning_metric), or write it as a TensorFlow summary with "
            f"that tag under the job dir.",
            "WARNING",
        )

    def _count_completed(self) -> None:
        done = sum(
            1
            for t in self._output.get("trials") or ()
            if t.get("state") == JobState.SUCCEEDED.value
        )
        self._output["completedTrialCount"] = str(done)

    def _last_failure(self) -> str:
        for t in reversed(self._output.get("trials") or []):
            if t.get("_error"):
                return f"\nTrial {t['trialId']}: {t['_error']}"
        return ""

    def _finish_live_trials(self, state: JobState) -> None:
        job = self.host.stored(self.project, self.job_id)
        out = job.get("trainingOutput") or {}
        for t in out.get("trials") or ():
            if t.get("state") == JobState.RUNNING.value:
                t["state"] = state.value
                t["endTime"] = job_time()
        if out:
            self._output = out
            self._save_output()

    def _save_output(self) -> None:
        """Write trainingOutput into the job record (the trials as the API shows them)."""
        out = dict(self.host.stored(self.project, self.job_id).get("trainingOutput") or {})
        out.update(
            {k: v for k, v in self._output.items() if k != "trials"},
        )
        out["trials"] = [
            {k: v for k, v in t.items() if not k.startswith("_")}
            for t in self._output.get("trials") or ()
        ]
        if not out["trials"]:
            del out["trials"]
        self.host.set_training_output(self.project, self.job_id, out)


def _trial_order(trial_id: str) -> tuple[int, str]:
    return (int(trial_id), "") if trial_id.isdigit() else (1 << 62, trial_id)


EVENT_FILE_MAX_BYTES = 256 << 20
"""The largest event file read for a trial's metric: summaries of scalars stay far below, and a
replica-written file is never read whole into the service's memory past this."""


def _event_series(
    gcs_root: Path, files: list[Path], local_roots: list[Path], tag: str
) -> tuple[list[tuple[int, float]], list[str]]:
    """``(step, value)`` for ``tag`` from the given event files (objects under ``gcs_root``)
    and any under ``local_roots`` (the replica's work dir, for a trainer that wrote its
    summaries to a relative path; the trial's own folder of a local jobDir), ordered by step;
    and why some files were not read. A container writes those folders: they are walked and
    read through ``untrusted_files``, so a link or FIFO named like an event file is skipped,
    never followed."""
    found: list[tuple[Path, bytes | UntrustedFileError]] = []
    for path in files:
        try:
            found.append(
                (
                    path,
                    read_beneath(
                        gcs_root, path.relative_to(gcs_root).as_posix(), limit=EVENT_FILE_MAX_BYTES
                    ),
                )
            )
        except UntrustedFileError as exc:
            found.append((path, exc))
        except (OSError, ValueError):
            continue
    for root in local_roots:
        found += files_beneath(root, is_event_file, EVENT_FILE_MAX_BYTES)
    series: list[tuple[int, float]] = []
    problems: list[str] = []
    for _path, data in found:
        if isinstance(data, UntrustedFileError):
            problems.append(data.strerror or str(data))
            continue
        series += scalar_series(data, tag)
    series.sort(key=lambda point: point[0])
    return series, problems
