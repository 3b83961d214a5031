"""Where and how a job's replicas run: admission, the runners, the per-replica supervisor.

One room because these modules share one concern, a replica's life from admission to exit, and
change together: the scheduler admits a job, a runner (``runner``, ``trials`` for tuning jobs)
starts a supervisor per replica with its cluster variables (``cluster_env``) and priority
(``replica_priority``), and reaches the service only through ``runner_host.RunnerHost``. The
service's core assembles this room; nothing here imports the core's HTTP or job-record modules.

Kept import-free: ``python -m tui_app.local.execution.supervisor`` runs once per replica and
must not pay for its siblings' imports.
"""
