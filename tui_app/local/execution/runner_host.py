"""What a job's runner may ask of the service that made it, and nothing more.

A runner (``runner.py``, ``trials.py``) drives one job; the service (``jobs.JobService``) owns
the job records, the log writer and the scheduler. The runner depends on this Protocol rather
than on the service, so the service can change its insides without reaching into every runner,
a test can drive a runner with a stand-in, and the import contract in ``pyproject.toml`` keeps
the runner modules from importing the service module at all.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from tui_app.local.environments.containers import Engine, ImagePuller
    from tui_app.local.environments.runtime_envs import Environment
    from tui_app.local.execution.executor import Executor
    from tui_app.local.execution.scheduler import Scheduler
    from tui_app.local.logs.log_ingest import LogSource
    from tui_app.local.paths import StateDir
    from tui_app.local.storage.storage_env import ReplicaWriter
    from tui_app.model.jobs.states import JobState


class RunnerHost(Protocol):
    """The service as its runners see it."""

    @property
    def state(self) -> StateDir:
        """Where job dirs, packages and the ``gs://`` buckets live on disk (``packages``
        takes it whole)."""

    @property
    def scheduler(self) -> Scheduler:
        """Admission and capacity: a runner asks for, adopts and releases its own slots, and
        reads the machine's capacity for its warnings and GPU order."""

    @property
    def executor(self) -> Executor:
        """Where replicas run: places a run's replicas, starts, adopts and releases them."""

    @property
    def listening(self) -> asyncio.Event:
        """Set once the service's address is known (replicas started again wait for it)."""

    @property
    def restart_backoff_scale(self) -> float:
        """Multiplies the restart rules' waits: between a replica's restarts and for a node
        with room (``--restart-backoff-scale``)."""

    @property
    def grace_seconds(self) -> float:
        """How long a replica gets between SIGTERM and SIGKILL."""

    @property
    def replica_nice(self) -> int:
        """Nice steps each replica runs below the service (``replica_priority``)."""

    @property
    def container_engine(self) -> Engine | None:
        """The engine container replicas run on, None when the machine has none."""

    @property
    def image_puller(self) -> ImagePuller | None:
        """Pulls a container job's images while it is PREPARING (None without an engine)."""

    @property
    def container_problem(self) -> str:
        """Why there is no engine, with what to install ('' when there is one)."""

    # -- the job record ---------------------------------------------------------------------

    def stored(self, project: str, job_id: str) -> dict[str, Any]:
        """The job as stored (no live ML units).

        Raises:
            ApiError: NOT_FOUND when there is no such job.
        """

    def queue(self, project: str, job_id: str) -> dict[str, Any]:
        """Why the job waits (the ``:queue`` answer), ``{}`` when it does not."""

    def find_job(self, project: str, job_id: str) -> dict[str, Any] | None:
        """Another job of the project, or None: a tuning job resuming an earlier study may
        name one that does not exist."""

    def transition(
        self, project: str, job_id: str, state: JobState, startTime: bool = False
    ) -> dict[str, Any]:
        """Move a live job to ``state`` (a terminal job stays as it is)."""

    def finish(
        self, project: str, job_id: str, state: JobState, error: str | None = None
    ) -> dict[str, Any]:
        """Make the job terminal, with ``error`` as its errorMessage."""

    def set_training_output(self, project: str, job_id: str, output: dict[str, Any]) -> None:
        """Replace a live job's trainingOutput (a tuning job's trials as they run)."""

    def set_restarts(self, project: str, job_id: str, restarts: list[dict[str, Any]]) -> None:
        """Show a live job's replica restarts on its resource (``replicaRestarts``)."""

    def save_runtime(self, project: str, job_id: str, runtime: dict[str, Any]) -> None:
        """Persist what a restarted service needs to find the job's replicas again."""

    # -- the job's log ------------------------------------------------------------------------

    def service_log(
        self, project: str, job_id: str, message: str, severity: int, trial: str | None = None
    ) -> None:
        """A ``service`` entry in the job's log (labelled with ``trial`` for a trial's)."""

    def follow_log(self, source: LogSource) -> None:
        """Tail a replica's output file into the log store, from the offset it committed."""

    def drain_logs(self, sources: Iterable[LogSource]) -> concurrent.futures.Future[None]:
        """Resolves once every byte the files hold now is stored: a job turns terminal only
        after its replicas' last lines are in its log."""

    # -- what replicas need -------------------------------------------------------------------

    async def runtime_environment(
        self,
        project: str,
        job_id: str,
        ti: dict[str, Any],
        gpu: bool,
        log: Callable[[str], None],
        trainer_packages: Sequence[Mapping[str, str]] = (),
    ) -> Environment | None:
        """The job's runtime environment, built or reused; None without a runtimeVersion.
        ``trainer_packages`` (what the job's packages were: ``FetchedPackage.as_json``) go
        into the ``:environment`` answer with it.

        Raises:
            runtimes.RuntimeRefused, runtime_envs.RuntimeEnvError: the job fails with the message.
        """

    def replica_storage_env(
        self, project: str, job_id: str, trial: str | None, task_name: str
    ) -> dict[str, str]:
        """The environment that lets a replica reach ``gs://`` through the service."""

    def on_object_written(
        self, callback: Callable[[ReplicaWriter, str, str], None]
    ) -> Callable[[], None]:
        """Hear of every object a replica writes until the returned callable is called."""

    # -- the runner itself --------------------------------------------------------------------

    def runner_done(self, project: str, job_id: str) -> None:
        """The job's runner has ended: the service stops counting it among the live ones."""
