"""Entry point: ``python -m trainer.task [flags] --job-dir DIR``.

The platform starts this module once per replica with the same arguments and a different
``TF_CONFIG``; the replica's role decides what it does:

* ``ps``: serve a shard of the parameters until the service stops it (:mod:`trainer.ps`).
* ``master``/``chief`` and ``worker``: asynchronous SGD against the parameter servers (or
  alone, with local parameters, when the cluster has none, e.g. the BASIC tier or no TF_CONFIG).
  Only the chief resumes from and writes checkpoints, writes the model and reports the
  hyperparameter-tuning metric, and its exit status is the job's.
* ``evaluator``: follows training and logs the held-out loss.

Unknown flags (e.g. a tuning job's ``--foo=1``) are logged and ignored rather than fatal.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or sys.version_info >= (3, 8):
    from typing import Protocol
else:  # Python 3.7: only its annotations use it
    Protocol = object

from trainer import checkpoints, demos, ps, summaries
from trainer.cluster import TaskInfo, TFConfigError, task_from_environment
from trainer.data import (
    Batch,
    FileData,
    SyntheticData,
    eval_set,
    loss_and_gradient,
    mse,
    shard_seed,
    true_params,
    wait_for_data,
)
from trainer.hypertune import DEFAULT_METRIC_TAG, HyperTune
from trainer.util import as_float32, atomic_write_json, log, warn


def _add(parser: argparse.ArgumentParser, flag: str, **kwargs: Any) -> None:
    """Add ``--some-flag`` and its ``--some_flag`` spelling (tuning configs often use either)."""
    names = [flag]
    if "-" in flag[2:]:
        names.append("--" + flag[2:].replace("-", "_"))
    parser.add_argument(*names, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The trainer's flags.

    ``allow_abbrev=False`` so that an unknown ``--step=3`` is not silently taken as ``--steps``:
    tuning jobs pass flags we may not know, and those must be ignored, not guessed at.
    """
    parser = argparse.ArgumentParser(
        prog="python -m trainer.task",
        description="Linear regression trained by asynchronous data-parallel SGD.",
        allow_abbrev=False,
    )
    _add(parser, "--job-dir", default=None, help="output dir: checkpoints, model, tf_config")
    _add(
        parser,
        "--train-file",
        default=None,
        help="CSV of training rows x1,...,xDIM,y (a local path or gs:// URI) instead of "
        "synthetic examples",
    )
    _add(parser, "--steps", type=int, default=200, help="train until this global step")
    _add(parser, "--learning-rate", type=float, default=0.05, help="SGD learning rate")
    _add(parser, "--batch-size", type=int, default=32, help="examples per step")
    _add(parser, "--dim", type=int, default=8, help="number of features")
    _add(parser, "--log-every", type=int, default=10, help="log a step line every N steps")
    _add(
        parser,
        "--checkpoint-every",
        type=int,
        default=50,
        help="chief: checkpoint and report the metric every N steps (0: only at the end)",
    )
    _add(parser, "--sleep", type=float, default=0.0, help="seconds to sleep after each step")
    _add(parser, "--seed", type=int, default=0, help="base seed of the data shards")
    _add(
        parser,
        "--metric-tag",
        default=DEFAULT_METRIC_TAG,
        help="hyperparameter metric tag (the held-out MSE: tune with goal MINIMIZE)",
    )
    _add(
        parser,
        "--connect-timeout",
        type=float,
        default=60.0,
        help="seconds to keep retrying an unreachable parameter server",
    )
    _add(parser, "--ps-log-every", type=int, default=50, help="ps: log every N pushes")
    _add(
        parser,
        "--fail-at-step",
        type=int,
        default=None,
        help="fail with a traceback once the global step reaches N",
    )
    _add(
        parser,
        "--fail-task",
        default="master:0",
        help="replica --fail-at-step applies to: TYPE:INDEX, TYPE or any",
    )
    _add(
        parser,
        "--exit-code",
        type=int,
        default=None,
        help="with --fail-at-step: sys.exit(N) instead of raising",
    )
    _add(
        parser,
        "--hang-at-step",
        type=int,
        default=None,
        help="hang for good once the global step reaches N (before --steps): ps 0 stops "
        "answering, or a trainer alone waits for data that never comes",
    )
    _add(parser, "--flood", type=int, default=0, help="print N filler lines before training")
    _add(parser, "--flood-line-bytes", type=int, default=100, help="bytes per --flood line")
    _add(
        parser,
        "--log-level-demo",
        action="store_true",
        help="log DEBUG/INFO/WARNING/ERROR lines and an absl-style line to stderr",
    )
    _add(
        parser,
        "--ignore-sigterm",
        action="store_true",
        help="ignore SIGTERM, and spawn a child that ignores it too",
    )
    _add(
        parser,
        "--spawn-child-new-session",
        action="store_true",
        help="spawn a sleeping child in its own session",
    )
    _add(
        parser,
        "--spawn-escaping-child",
        action="store_true",
        help="start a daemon the way daemons start (setsid, fork, the parent exits) that "
        "ignores SIGTERM and outlives even a normal exit",
    )
    return parser


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """Parse known flags, validate them, and return the unknown ones separately."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    for name in ("steps", "checkpoint_every", "flood"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must be >= 0")
    for name in ("batch_size", "dim", "log_every", "ps_log_every"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.sleep < 0:
        parser.error("--sleep must be >= 0")
    if args.hang_at_step is not None and args.hang_at_step < 0:
        parser.error("--hang-at-step must be >= 0")
    _, _, fail_index = args.fail_task.strip().partition(":")
    if fail_index and not fail_index.isdigit():
        parser.error("--fail-task must be TYPE:INDEX, TYPE or any")
    trial = trial_id()
    if args.job_dir and trial:
        # Trials of a tuning job run at once: each keeps its checkpoints in its own subdir (as
        # the platform's samples did), or one would resume from another's.
        args.job_dir = os.path.join(args.job_dir, trial)
    return args, unknown


def trial_id() -> str:
    """This run's hyperparameter-tuning trial (TF_CONFIG's task.trial), or "" outside one."""
    try:
        task = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task") or {}
    except ValueError:
        return ""
    return str(task.get("trial") or "")


class ParamStore(Protocol):
    """Where parameters live: the parameter servers, or this process (no ps in the cluster)."""

    def get_step(self) -> int: ...

    def pull(self) -> tuple[list[float], int]: ...

    def push(self, grads: Sequence[float], lr: float) -> int: ...

    def assign(self, params: Sequence[float], step: int) -> None: ...


class LocalParams:
    """Plain in-process SGD with the same interface as :class:`trainer.ps.ParameterClient`."""

    def __init__(self, dim: int) -> None:
        self.params = [0.0] * (dim + 1)
        self.step = 0

    def get_step(self) -> int:
        """Steps taken so far."""
        return self.step

    def pull(self) -> tuple[list[float], int]:
        """A copy of the parameters, and the step."""
        return list(self.params), self.step

    def push(self, grads: Sequence[float], lr: float) -> int:
        """One SGD update; returns the new step."""
        self.params = [p - lr * g for p, g in zip(self.params, grads)]
        self.step += 1
        return self.step

    def assign(self, params: Sequence[float], step: int) -> None:
        """Replace parameters and step (restoring a checkpoint)."""
        self.params = [float(p) for p in params]
        self.step = step


def announce(task: TaskInfo, job_dir: str | None) -> None:
    """Log the TF_CONFIG this replica got and save it, so tests can check what each one saw."""
    cluster = json.dumps(task.cluster, sort_keys=True)
    log(f"TF_CONFIG task={task.task_type}:{task.index} cluster={cluster}")
    if job_dir:
        atomic_write_json(os.path.join(job_dir, "tf_config", f"{task.name}.json"), task.raw)


def restore(store: ParamStore, job_dir: str | None, dim: int) -> None:
    """Chief only: continue from the newest checkpoint in ``job_dir``, if there is one.

    With parameter servers the checkpoint is pushed to them, unless they are already further
    along (a chief restarted while its ps kept serving): then theirs is the newer state.
    """
    if not job_dir:
        return
    latest = checkpoints.load_latest(job_dir, dim + 1)
    if latest is None:
        return
    step, params = latest
    current = store.get_step()
    if step <= current:
        log(f"Checkpoint at step {step} is not newer than global step {current}; not restoring")
        return
    store.assign(params, step)
    log(f"Resumed from checkpoint at step {step}")


def _next_multiple(step: int, every: int) -> int:
    """The first multiple of ``every`` above ``step`` (0 when ``every`` is 0: disabled).

    Thresholds rather than ``step % every == 0``: with several trainers, the global step one
    replica sees jumps over the values other replicas' pushes produced.
    """
    return (step // every + 1) * every if every else 0


def train(args: argparse.Namespace, task: TaskInfo, failure: demos.FailurePlan) -> int:
    """Chief/worker loop: pull, compute the gradient on our shard's batch, push, repeat."""
    store: ParamStore
    if task.ps_addresses:
        client = ps.ParameterClient(
            task.ps_addresses, args.dim, args.connect_timeout, rpc_timeout(args)
        )
        count, addresses = len(task.ps_addresses), ", ".join(task.ps_addresses)
        log(f"{task.name}: connecting to {count} parameter server(s): {addresses}")
        step = client.wait_until_ready()
        log(f"{task.name}: parameter servers ready at global step {step}")
        store = client
    else:
        log(f"{task.name}: no parameter servers in the cluster; training alone")
        store = LocalParams(args.dim)

    hypertune = HyperTune() if task.is_chief else None
    # The chief writes TensorBoard summaries: the training loss under train/, the held-out loss
    # under eval/ (see trainer.summaries).
    train_writer = summaries.writer_for(args.job_dir, "train") if task.is_chief else None
    held_out = eval_set(args.dim)
    if task.is_chief:
        restore(store, args.job_dir, args.dim)

    step = store.get_step()
    data: Any = SyntheticData(args.dim, shard_seed(args.seed, task.task_type, task.index, step))
    if args.train_file:
        data = FileData.read(args.train_file, args.dim)
        log(f"{task.name}: training on {len(data.rows)} rows of {args.train_file}")
    failure.check(step)
    next_log = 0
    next_checkpoint = _next_multiple(step, args.checkpoint_every)
    last_saved = -1
    # With parameter servers, ps 0 decides the hang (trainer.ps): this loop then waits in pull.
    hang_at = None if task.ps_addresses else args.hang_at_step
    while step < args.steps:
        if hang_at is not None and step >= hang_at:
            log(f"hanging at step {hang_at} (--hang-at-step)")
            wait_for_data()
        params, _ = store.pull()
        loss, grads = loss_and_gradient(params, data.batch(args.batch_size))
        if not math.isfinite(as_float32(loss)):
            # Past float32's range the loss is inf as TensorFlow or PyTorch would compute it,
            # and as the summary stores it: the log, the event file and the error all say so at
            # this step (a double would go on "finite" up to 1e308 and tell a second story).
            loss = as_float32(loss)
            log(f"step {step} loss={loss} task={task.name}")
            if train_writer is not None:
                train_writer.scalar("loss", loss, step)
                train_writer.flush()
            raise RuntimeError(
                f"Training diverged at step {step} (loss={loss}); lower --learning-rate"
            )
        step = store.push(grads, args.learning_rate)
        if step >= next_log:
            log(f"step {step} loss={loss:.6f} task={task.name}")
            next_log = _next_multiple(step, args.log_every)
            if train_writer is not None:
                train_writer.scalar("loss", loss, step)
        failure.check(step)
        # The last checkpoint and report are finish()'s, so they are not written twice.
        if hypertune is not None and next_checkpoint and next_checkpoint <= step < args.steps:
            last_saved = checkpoint(store, args, hypertune, held_out)
            next_checkpoint = _next_multiple(step, args.checkpoint_every)
        if args.sleep:
            time.sleep(args.sleep)

    if train_writer is not None:
        train_writer.flush()
    if hypertune is None:
        log(f"{task.name}: global step {step} reached --steps {args.steps}; done")
        return 0
    return finish(store, args, hypertune, held_out, last_saved)


def rpc_timeout(args: argparse.Namespace) -> float | None:
    """How long a trainer waits for a parameter server's answer to one call.

    None (no limit) with ``--hang-at-step``: a real job has none, and the timeout would end the
    hang it injects (a retry, ``waiting for ps`` lines) instead of leaving every trainer waiting.
    """
    return None if args.hang_at_step is not None else ps.RPC_TIMEOUT_SECONDS


def checkpoint(
    store: ParamStore, args: argparse.Namespace, hypertune: HyperTune, held_out: Batch
) -> int:
    """Chief: save a checkpoint (given a job dir) and report the held-out loss as the metric.

    The checkpointed parameters are pulled afresh, so file, step and reported loss agree even
    while other workers keep pushing. Returns the step saved.
    """
    params, step = store.pull()
    eval_loss = mse(params, held_out)
    saved = ""
    if args.job_dir:
        saved = " saved " + checkpoints.save(args.job_dir, step, params)
    hypertune.report_hyperparameter_tuning_metric(args.metric_tag, eval_loss, step)
    _eval_summary(args, eval_loss, step)
    log(f"checkpoint step {step} eval_loss={eval_loss:.6f}{saved}")
    return step


_EVAL_WRITERS: dict[str, summaries.SummaryWriter] = {}


def _eval_summary(args: argparse.Namespace, loss: float, step: int) -> None:
    """The held-out loss as a TensorBoard scalar under ``<job-dir>/eval`` (one file per run)."""
    if not args.job_dir:
        return
    writer = _EVAL_WRITERS.get(args.job_dir)
    if writer is None:
        writer = _EVAL_WRITERS[args.job_dir] = summaries.SummaryWriter(
            args.job_dir.rstrip("/") + "/eval"
        )
    writer.scalar("loss", loss, step)
    writer.flush()


def finish(
    store: ParamStore,
    args: argparse.Namespace,
    hypertune: HyperTune,
    held_out: Batch,
    last_saved: int,
) -> int:
    """Chief: evaluate the final model, save it, report the metric; the job succeeds on 0."""
    params, step = store.pull()
    final_loss = mse(params, held_out)
    log(f"final loss={final_loss:.6f}")
    if args.job_dir:
        if step != last_saved:
            log(f"checkpoint step {step} saved {checkpoints.save(args.job_dir, step, params)}")
        model_path = os.path.join(args.job_dir, "model", "model.json")
        truth = true_params(args.dim)
        atomic_write_json(
            model_path,
            {
                "dim": args.dim,
                "weights": params[:-1],
                "bias": params[-1],
                "global_step": step,
                "eval_loss": final_loss,
                "true_weights": truth[:-1],
                "true_bias": truth[-1],
            },
        )
        log(f"model written to {model_path}")
    hypertune.report_hyperparameter_tuning_metric(args.metric_tag, final_loss, step)
    _eval_summary(args, final_loss, step)
    log(f"reported {args.metric_tag}={final_loss:.6f} (goal MINIMIZE) to {hypertune.metric_path}")
    return 0


def evaluate(args: argparse.Namespace, task: TaskInfo) -> int:
    """Evaluator: log the held-out loss as training progresses, until --steps is reached.

    It reads the parameter servers when there are some, otherwise the chief's checkpoints
    (giving up after --connect-timeout seconds without a new one).
    """
    held_out = eval_set(args.dim)
    poll = max(args.sleep, 0.5)
    last_step = -1
    if task.ps_addresses:
        client = ps.ParameterClient(
            task.ps_addresses, args.dim, args.connect_timeout, rpc_timeout(args)
        )
        client.wait_until_ready()
        while last_step < args.steps:
            params, step = client.pull()
            if step != last_step:
                log(f"eval step {step} loss={mse(params, held_out):.6f} task={task.name}")
                last_step = step
            time.sleep(poll)
        return 0
    if not args.job_dir:
        log(f"{task.name}: no parameter servers and no --job-dir: nothing to evaluate")
        return 0
    deadline = time.monotonic() + args.connect_timeout
    while last_step < args.steps and time.monotonic() < deadline:
        latest = checkpoints.load_latest(args.job_dir, args.dim + 1)
        if latest is not None and latest[0] != last_step:
            last_step, params = latest
            log(f"eval step {last_step} loss={mse(params, held_out):.6f} task={task.name}")
            deadline = time.monotonic() + args.connect_timeout
        time.sleep(poll)
    return 0


def _below(step: int | None, limit: int) -> int | None:
    """``step`` if it is set and below ``limit``, else None."""
    return step if step is not None and step < limit else None


def main(argv: Sequence[str] | None = None) -> int:
    """Run this replica's role; the return value is the process exit status."""
    args, unknown = parse_args(argv)
    try:
        task = task_from_environment()
    except TFConfigError as exc:
        warn(f"ERROR: {exc}")
        return 2
    announce(task, args.job_dir)
    if unknown:
        log(f"Ignoring unknown arguments: {' '.join(unknown)}")
    if args.log_level_demo:
        demos.log_level_demo()
    if args.flood:
        demos.flood(args.flood, args.flood_line_bytes)
    if args.ignore_sigterm:
        demos.ignore_sigterm()
    if args.spawn_child_new_session:
        demos.spawn_child_new_session()
    if args.spawn_escaping_child:
        demos.spawn_escaping_child()
    failure = demos.FailurePlan.for_task(args.fail_at_step, args.fail_task, args.exit_code, task)

    try:
        if task.task_type == "ps":
            return ps.serve(
                task,
                args.dim,
                args.ps_log_every,
                failure.at_step,
                failure.check,
                handle_sigterm=not args.ignore_sigterm,
                # From --steps on the trainers are done: there is nothing left to stop answering.
                hang_at_step=_below(args.hang_at_step, args.steps),
            )
        if task.task_type == "evaluator":
            return evaluate(args, task)
        return train(args, task, failure)
    except ps.PSUnavailableError as exc:
        warn(f"ERROR: {task.name}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
