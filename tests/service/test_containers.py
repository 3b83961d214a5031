"""Custom-container jobs on a real service with a real engine (issue 30).

Every replica of these jobs is a container that podman (or docker) runs from an image built on
this machine (``tests/support/container_images.py``): the sample trainer on a Debian python3
root, or a static busybox shell for plumbing. Covered: a CUSTOM cluster training over TF_CONFIG,
its logs (every line once, severity kept), exit statuses and memory kills as the platform's
messages, cancel and ``maxRunningTime`` with the grace period, a ``kill -9`` of the service and
its restart (adoption, orphans), tuning trials' metrics through the mounted hypertune folder, a
pull that fails, per-role images with their containerCommand and containerArgs, the 400s at
create, the engine's CPU and memory samples and ``service status``.

After each job the engine must hold no container of it: ``engine ps -a`` filtered by this
service's label (other workers run other services' containers meanwhile).
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _start, _stop, serve, unique_id
from tests.support.container_images import engine_env
from tests.support.live_service import PROJECT, LiveService, free_port, grid_search
from tui_app.local.environments.containers import LABEL_JOB, LABEL_SERVICE, Engine, service_key

GRACE = 2.0
"""The services' --grace-seconds (``_start``'s default)."""
CLUSTER: dict[str, Any] = {
    "scaleTier": "CUSTOM",
    "masterType": "standard",
    "workerType": "standard",
    "workerCount": "1",
    "parameterServerType": "standard",
    "parameterServerCount": "1",
}
TWO: dict[str, Any] = {
    "scaleTier": "CUSTOM",
    "masterType": "standard",
    "workerType": "standard",
    "workerCount": "1",
}
LONG = ("--steps", "100000", "--sleep", "0.05", "--log-every", "1")
MEMORY_LIMIT = "64m"
SAMPLE_SECONDS = "0.5"
MiB = 1024 * 1024


# -- services ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ctr_service(
    tmp_path_factory: pytest.TempPathFactory, container_engine: Engine
) -> Iterator[LiveService]:
    """A service that runs containers, on a host it is told has no GPU."""
    yield from serve(tmp_path_factory, "svc-ctr", "--gpus", "0", env=engine_env())


@pytest.fixture(scope="module")
def limited_service(
    tmp_path_factory: pytest.TempPathFactory, container_engine: Engine
) -> Iterator[LiveService]:
    """Every container limited to 64 MiB (a user's --container-run-args, after the service's
    own --memory), sampled every 0.5 s."""
    env = {**engine_env(), "TUI_APP_METRICS_SECONDS": SAMPLE_SECONDS}
    flags = ("--container-run-args", f"--memory {MEMORY_LIMIT}")
    yield from serve(tmp_path_factory, "svc-ctr-limited", *flags, env=env)


@pytest.fixture(scope="module")
def engineless_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveService]:
    """A service told to use an engine that does not exist (runs on any machine)."""
    yield from serve(tmp_path_factory, "svc-no-engine", "--container-engine", "no-such-engine")


# -- helpers -----------------------------------------------------------------------------------


def container_job(
    job_id: str,
    image: str,
    args: tuple[str, ...] = (),
    command: list[str] | None = None,
    **training: Any,
) -> dict[str, Any]:
    """A jobs.create body whose master runs ``image`` (``command``: its containerCommand)."""
    master: dict[str, Any] = {"imageUri": image}
    if command is not None:
        master["containerCommand"] = command
    ti: dict[str, Any] = {"region": "us-central1", "masterConfig": master}
    if args:
        ti["args"] = list(args)
    for key, value in training.items():
        if key == "masterConfig":
            master.update(value)
        else:
            ti[key] = value
    return {"jobId": job_id, "trainingInput": ti}


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """``check()``'s first true value; fails naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


def containers_of(engine: Engine, svc: LiveService, job_id: str | None = None) -> list[str]:
    """Names of the service's containers (of one job), running or not, as the engine lists."""
    cmd = engine.command("ps", "-a", "--format", "{{.Names}}")
    cmd += ["--filter", f"label={LABEL_SERVICE}={service_key(svc.state_dir)}"]
    if job_id is not None:
        cmd += ["--filter", f"label={LABEL_JOB}={PROJECT}/{job_id}"]
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=60, env=engine_env(), check=True
    )
    return done.stdout.split()


def work_dir(svc: LiveService, job_id: str, task: str, trial: str | None = None) -> Path:
    base = svc.state_dir / "jobs" / PROJECT / job_id
    return (base / "trials" / trial if trial else base) / task


def entries_of(svc: LiveService, job_id: str, task: str) -> list[dict[str, Any]]:
    return svc.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="{task}" '
        'AND timestamp>="1970-01-01T00:00:00Z"'
    )


def messages(svc: LiveService, job_id: str, task: str) -> list[str]:
    return [str(e["jsonPayload"]["message"]) for e in entries_of(svc, job_id, task)]


def file_lines(svc: LiveService, job_id: str, task: str) -> tuple[list[str], list[str]]:
    """What the container wrote to stdout and to stderr (its supervisor's files)."""
    work = work_dir(svc, job_id, task)
    out = (work / "stdout.log").read_text(errors="replace").splitlines()
    err = (work / "stderr.log").read_text(errors="replace").splitlines()
    return out, err


def written_steps(svc: LiveService, job_id: str, task: str) -> list[int]:
    """The steps a replica has written to stdout so far (none before its file exists)."""
    path = work_dir(svc, job_id, task) / "stdout.log"
    return steps(path.read_text(errors="replace").splitlines()) if path.exists() else []


def steps(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for ln in lines if (m := re.match(r"step (\d+) loss=", ln))]


def assert_every_line_once(svc: LiveService, job_id: str, tasks: list[str]) -> None:
    """Each line the container wrote is stored exactly once; stdout's in its order."""
    for task in tasks:
        stored = messages(svc, job_id, task)
        out, err = file_lines(svc, job_id, task)
        assert out or err, f"{task} wrote nothing"
        assert collections.Counter(stored) == collections.Counter(out + err), task
        in_out = set(out)
        assert [s for s in stored if s in in_out] == out, task


def tf_config_line(lines: list[str]) -> tuple[str, dict[str, list[str]]]:
    """The trainer's ``TF_CONFIG task=TYPE:INDEX cluster={...}`` line, parsed."""
    [line] = [ln for ln in lines if ln.startswith("TF_CONFIG task=")]
    m = re.fullmatch(r"TF_CONFIG task=(\S+) cluster=(.*)", line)
    assert m, line
    return m.group(1), json.loads(m.group(2))


def spec_of(svc: LiveService, job_id: str, task: str, trial: str | None = None) -> dict[str, Any]:
    data = json.loads((work_dir(svc, job_id, task, trial) / "spec.json").read_text())
    assert isinstance(data, dict)
    return data


# -- a cluster of containers -------------------------------------------------------------------


def test_a_custom_cluster_of_containers_trains_over_tf_config(
    ctr_service: LiveService, container_engine: Engine, trainer_image: str
) -> None:
    svc = ctr_service
    job_id = unique_id("ctr_cluster")
    args = ("--steps", "40", "--sleep", "0.05", "--log-every", "1", "--log-level-demo")
    job_dir = f"gs://ctr-bucket/{job_id}"
    svc.client().create(container_job(job_id, trainer_image, args, jobDir=job_dir, **CLUSTER))
    job = svc.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    assert job["trainingInput"]["masterConfig"]["imageUri"] == trainer_image
    assert containers_of(container_engine, svc, job_id) == []

    tasks = ["master-replica-0", "worker-replica-0", "ps-replica-0"]
    assert_every_line_once(svc, job_id, tasks)
    clusters = {}
    for task in tasks:
        lines = messages(svc, job_id, task)
        role, cluster = tf_config_line(lines)
        assert role == {"master": "master:0", "worker": "worker:0", "ps": "ps:0"}[task[:-10]]
        clusters[task] = cluster
        spec = spec_of(svc, job_id, task)
        argv = spec["argv"]
        # The engine's run, in the foreground, on the host's network, values passed by name.
        assert argv[: len(container_engine.argv) + 1] == [*container_engine.argv, "run"], argv
        at = argv.index("--network")
        assert argv[at : at + 2] == ["--network", "host"], argv
        assert "--env" in argv and "TF_CONFIG" in argv
        assert spec["env"]["TF_CONFIG"] not in " ".join(argv)
        assert argv[argv.index(trainer_image) + 1 :] == [*args, "--job-dir", job_dir]
    # One cluster, the same for every replica: master, worker and ps at the host's ports.
    assert clusters["master-replica-0"] == clusters["worker-replica-0"] == clusters["ps-replica-0"]
    cluster = clusters["master-replica-0"]
    assert {k: len(v) for k, v in cluster.items()} == {"master": 1, "worker": 1, "ps": 1}
    # Both trainers pushed to the ps: the global step reached 40 between them.
    master_steps = steps(messages(svc, job_id, "master-replica-0"))
    worker_steps = steps(messages(svc, job_id, "worker-replica-0"))
    assert master_steps and worker_steps
    assert max(master_steps + worker_steps) >= 40
    assert not set(master_steps) & set(worker_steps)  # one global step each

    # Severity as for a process replica: stdout INFO, Python logging's levels kept, bare
    # stderr lines ERROR.
    severity = {
        e["jsonPayload"]["message"]: e["severity"]
        for e in entries_of(svc, job_id, "master-replica-0")
    }
    assert severity["WARNING:root:log-level demo: a WARNING line"] == "WARNING"
    assert severity["ERROR:root:log-level demo: an ERROR line"] == "ERROR"
    assert severity["INFO:root:log-level demo: an INFO line"] == "INFO"
    assert {severity[m] for m in severity if m.startswith("step ")} == {"INFO"}

    # --job-dir went in as the platform passed it, and gs:// reached the service from inside.
    model = svc.state_dir / "gcs" / "ctr-bucket" / job_id / "model" / "model.json"
    assert json.loads(model.read_text())["global_step"] >= 40
    saved = sorted(p.name for p in model.parents[1].joinpath("tf_config").iterdir())
    assert saved == ["master-0.json", "ps-0.json", "worker-0.json"]
    notes = messages(svc, job_id, "service")
    assert any(
        n.startswith("Started master-replica-0 (standard, container tui-app-")
        and n.endswith(f" of {trainer_image}).")
        for n in notes
    ), notes


def test_each_role_runs_its_own_image_with_its_command_and_args(
    ctr_service: LiveService, container_engine: Engine, trainer_image: str, tiny_image: str
) -> None:
    """A trainer master beside a busybox worker: workerConfig's image, containerCommand (the
    entrypoint, then the rest of it) and containerArgs, as ml v1 ran them."""
    svc = ctr_service
    job_id = unique_id("ctr_roles")
    script = 'echo "worker of $CLOUD_ML_JOB_ID got $#: $*"; echo "$TF_CONFIG"'
    body = container_job(
        job_id,
        trainer_image,
        scaleTier="CUSTOM",
        masterType="standard",
        masterConfig={"containerArgs": ["--steps", "10", "--log-every", "5"]},
        workerType="standard",
        workerCount="1",
        workerConfig={
            "imageUri": tiny_image,
            "containerCommand": ["/bin/sh", "-c", script, "sh"],
            "containerArgs": ["one", "two words"],
        },
    )
    svc.client().create(body)
    job = svc.wait_state(job_id, timeout=90)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    said, tf_config = messages(svc, job_id, "worker-replica-0")
    assert said == f"worker of {job_id} got 2: one two words"
    task = json.loads(tf_config)["task"]
    assert (task["type"], task["index"]) == ("worker", 0), task
    worker = spec_of(svc, job_id, "worker-replica-0")["argv"]
    at = worker.index(tiny_image)
    assert worker[at - 2 : at] == ["--entrypoint", "/bin/sh"]
    assert worker[at + 1 :] == ["-c", script, "sh", "one", "two words"]
    master = spec_of(svc, job_id, "master-replica-0")["argv"]
    assert "--entrypoint" not in master
    assert master[master.index(trainer_image) + 1 :] == ["--steps", "10", "--log-every", "5"]
    assert "final loss=" in " ".join(messages(svc, job_id, "master-replica-0"))
    assert containers_of(container_engine, svc, job_id) == []


def test_a_failing_container_fails_the_job_with_its_status_and_message(
    ctr_service: LiveService, container_engine: Engine, trainer_image: str
) -> None:
    svc = ctr_service
    job_id = unique_id("ctr_fail")
    # Its own traceback: a bug fails the job at once (an exit without one is restarted).
    args = ("--steps", "1000", "--fail-at-step", "3", "--log-every", "1")
    svc.client().create(container_job(job_id, trainer_image, args))
    job = svc.wait_state(job_id, timeout=60)
    assert job["state"] == "FAILED"
    message = job["errorMessage"]
    assert message.startswith("The replica master 0 exited with a non-zero status of 1.\n"), message
    assert "RuntimeError: Injected failure at step 3" in message
    assert containers_of(container_engine, svc, job_id) == []
    assert_every_line_once(svc, job_id, ["master-replica-0"])


def test_a_container_over_its_memory_limit_fails_as_out_of_memory(
    limited_service: LiveService, container_engine: Engine, tiny_image: str
) -> None:
    svc = limited_service
    job_id = unique_id("ctr_oom")
    hog = ["/bin/sh", "-c", "echo filling; x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo x"]
    svc.client().create(container_job(job_id, tiny_image, command=hog))
    job = svc.wait_state(job_id, timeout=60)
    assert job["state"] == "FAILED"
    assert job["errorMessage"].startswith(
        "The replica master 0 ran out-of-memory and exited with a non-zero status of 137 "
        "(SIGKILL): its container's memory limit is 64 MiB."
    ), job["errorMessage"]
    assert messages(svc, job_id, "master-replica-0") == ["filling"]
    assert containers_of(container_engine, svc, job_id) == []


def test_the_engines_cpu_and_memory_samples_reach_the_metrics_extension(
    limited_service: LiveService, container_engine: Engine, tiny_image: str
) -> None:
    svc = limited_service
    job_id = unique_id("ctr_usage")
    # 16 MB held in a shell variable, and a busy loop that ends on the cancel's SIGTERM.
    burn = ["/bin/sh", "-c", "trap 'exit 0' TERM; x=$(head -c 16000000 /dev/zero | tr '\\0' a); "
            "echo held; while :; do :; done"]  # fmt: skip
    svc.client().create(container_job(job_id, tiny_image, command=burn))
    path = f"/v1/projects/{PROJECT}/jobs/{job_id}:metrics"

    def busy() -> list[dict[str, Any]]:
        status, body = svc.request("GET", path)
        assert status == 200, body
        return [
            s
            for r in body["replicas"]
            if r["taskName"] == "master-replica-0"
            for s in r["samples"]
            if s["cpuPercent"] > 30 and int(s["memoryBytes"]) > 10 * MiB
        ]

    try:
        found = wait_for(busy, "a busy sample holding over 10 MiB", timeout=60)
        # The engine's figure: a container limited to 64 MiB cannot be measured above it.
        assert all(int(s["memoryBytes"]) <= 64 * MiB for s in found), found
    finally:
        svc.client().cancel(job_id)
    assert svc.wait_state(job_id, timeout=30)["state"] == "CANCELLED"
    assert containers_of(container_engine, svc, job_id) == []


# -- stopping ------------------------------------------------------------------------------------


def test_cancel_stops_every_container_within_the_grace_period(
    ctr_service: LiveService, container_engine: Engine, trainer_image: str
) -> None:
    """The engine's stop: SIGTERM (passed on by the container's init), then SIGKILL when the
    grace period ends. The worker ends on the SIGTERM; the master ignores it and is killed."""
    svc = ctr_service
    job_id = unique_id("ctr_cancel")
    body = container_job(
        job_id,
        trainer_image,
        masterConfig={"containerArgs": [*LONG, "--ignore-sigterm"]},
        workerConfig={"containerArgs": list(LONG)},
        **TWO,
    )
    svc.client().create(body)
    svc.wait_state(job_id, ("RUNNING",), timeout=60)
    tasks = ["master-replica-0", "worker-replica-0"]
    wait_for(lambda: all(written_steps(svc, job_id, t) for t in tasks), "a step from each")
    assert len(containers_of(container_engine, svc, job_id)) == 2
    start = time.monotonic()
    svc.client().cancel(job_id)
    job = svc.wait_state(job_id, timeout=30)
    took = time.monotonic() - start
    assert job["state"] == "CANCELLED" and job.get("endTime")
    # Killed when the grace period ends, not before, and long before the supervisor's own
    # last resort (2 x grace + 10 s).
    assert GRACE <= took < GRACE + 6, f"cancel took {took:.1f} s"
    assert containers_of(container_engine, svc, job_id) == []
    assert_every_line_once(svc, job_id, tasks)
    ended = {}
    for task in tasks:
        status = json.loads((work_dir(svc, job_id, task) / "status.json").read_text())
        assert status["stopped"] is True and status["container"], status
        ended[task] = status["container_exit_code"]
    assert ended == {"master-replica-0": 137, "worker-replica-0": 143}


def test_max_running_time_stops_a_container_job(
    ctr_service: LiveService, container_engine: Engine, tiny_image: str
) -> None:
    svc = ctr_service
    job_id = unique_id("ctr_max_running")
    # A shell that says so when SIGTERM reaches it: the engine's stop comes first, the kill
    # only after the grace period.
    stays = "trap 'echo got SIGTERM; exit 143' TERM; echo up; sleep 600 & wait"
    body = container_job(job_id, tiny_image, command=["/bin/sh", "-c", stays])
    body["trainingInput"]["scheduling"] = {"maxRunningTime": "2s"}
    svc.client().create(body)
    job = svc.wait_state(job_id, timeout=30)
    assert job["state"] == "CANCELLED", job.get("errorMessage")
    assert job["errorMessage"] == (
        "Job cancelled: it was still running after scheduling.maxRunningTime (2s)."
    )
    assert containers_of(container_engine, svc, job_id) == []
    assert messages(svc, job_id, "master-replica-0") == ["up", "got SIGTERM"]
    status = json.loads((work_dir(svc, job_id, "master-replica-0") / "status.json").read_text())
    assert status["container_exit_code"] == 143, status


# -- restart ---------------------------------------------------------------------------------


def test_a_killed_service_adopts_its_containers_and_removes_orphans(
    tmp_path: Path, container_engine: Engine, trainer_image: str, tiny_image: str
) -> None:
    state, port = tmp_path / "state", free_port()
    svc = _start(state, port=port, env=engine_env())
    key = service_key(state)
    orphan = f"tui-app-orphan-{key}"
    try:
        job_id = unique_id("ctr_recover")
        args = ("--steps", "120", "--sleep", "0.05", "--log-every", "1")
        svc.client().create(container_job(job_id, trainer_image, args, **TWO))
        svc.wait_state(job_id, ("RUNNING",), timeout=60)
        tasks = ["master-replica-0", "worker-replica-0"]
        wait_for(lambda: all(written_steps(svc, job_id, t) for t in tasks), "a step from each")
        boxes = containers_of(container_engine, svc, job_id)
        assert len(boxes) == 2

        # A crash: the service alone dies; its replicas' supervisors and containers live on.
        os.kill(svc.proc.pid, signal.SIGKILL)
        svc.proc.wait(10)
        seen = written_steps(svc, job_id, "master-replica-0")
        wait_for(
            lambda: len(written_steps(svc, job_id, "master-replica-0")) > len(seen) + 5,
            "lines written while nobody tails them",
        )
        assert sorted(containers_of(container_engine, svc, job_id)) == sorted(boxes)
        # A container of this service that no job owns (what a crash between a container's
        # start and its record leaves): the next service removes it.
        subprocess.run(
            container_engine.command(
                "run",
                "-d",
                "--name",
                orphan,
                "--label",
                f"{LABEL_SERVICE}={key}",
                tiny_image,
                "sleep",
                "600",
            ),
            capture_output=True,
            timeout=60,
            env=engine_env(),
            check=True,
        )

        svc = _start(state, port=port, env=engine_env())
        assert orphan not in containers_of(container_engine, svc)
        job = svc.wait_state(job_id, timeout=90)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        assert_every_line_once(svc, job_id, tasks)
        master_steps = steps(messages(svc, job_id, "master-replica-0"))
        assert master_steps == sorted(set(master_steps))
        assert containers_of(container_engine, svc) == []
        notes = messages(svc, job_id, "service")
        assert any("resumed the job with 2 running replicas" in n for n in notes), notes
    finally:
        _stop(svc)
        subprocess.run(
            container_engine.command("rm", "-f", orphan),
            capture_output=True,
            timeout=60,
            env=engine_env(),
            check=False,
        )


def test_a_power_cut_starts_the_lost_containers_again_and_the_trainer_resumes(
    tmp_path: Path, container_engine: Engine, trainer_image: str
) -> None:
    """The service, every supervisor and every container killed at once (a reboot): the next
    service starts each container again under its name, on its spec, and the trainer goes on
    from its checkpoint in the job dir."""
    state, port = tmp_path / "state", free_port()
    job_dir = tmp_path / "job-dir"
    job_dir.mkdir()
    svc = _start(state, port=port, env=engine_env())
    try:
        job_id = unique_id("ctr_power")
        args = ("--steps", "150", "--sleep", "0.03", "--log-every", "1", "--checkpoint-every", "20")
        svc.client().create(container_job(job_id, trainer_image, args, jobDir=str(job_dir)))
        svc.wait_state(job_id, ("RUNNING",), timeout=60)
        wait_for(lambda: list((job_dir / "checkpoints").glob("ckpt-*.json")), "a checkpoint")
        (box,) = containers_of(container_engine, svc, job_id)
        sup = json.loads(
            (
                svc.state_dir / "jobs" / PROJECT / job_id / "master-replica-0" / "pid.json"
            ).read_text()
        )["supervisor"]

        os.kill(svc.proc.pid, signal.SIGKILL)
        svc.proc.wait(10)
        os.kill(sup, signal.SIGKILL)
        subprocess.run(
            container_engine.command("kill", box),
            capture_output=True,
            timeout=60,
            env=engine_env(),
            check=False,
        )

        svc = _start(state, port=port, env=engine_env())
        job = svc.wait_state(job_id, timeout=120)
        assert job["state"] == "SUCCEEDED", job.get("errorMessage")
        (restart,) = job["replicaRestarts"]
        assert restart["taskName"] == "master-replica-0" and restart["count"] == 1
        out = messages(svc, job_id, "master-replica-0")
        assert any(line.startswith("Resumed from checkpoint at step ") for line in out), out[-10:]
        notes = messages(svc, job_id, "service")
        line = "master-replica-0 restarted (1 of 5): its machine restarted; resuming"
        assert line in notes, notes
        assert containers_of(container_engine, svc) == []
    finally:
        _stop(svc)


# -- tuning ------------------------------------------------------------------------------------


def test_each_trial_of_a_tuning_job_is_a_container_and_reports_its_metric(
    ctr_service: LiveService, container_engine: Engine, trainer_image: str
) -> None:
    svc = ctr_service
    job_id = unique_id("ctr_hp")
    hp = grid_search("learning_rate", [0.02, 0.1], parallel=2)
    args = ("--steps", "20", "--checkpoint-every", "10")
    svc.client().create(container_job(job_id, trainer_image, args, hyperparameters=hp))
    job = svc.wait_state(job_id, timeout=120)
    assert job["state"] == "SUCCEEDED", job.get("errorMessage")
    out = job["trainingOutput"]
    assert out["isHyperparameterTuningJob"] is True
    assert out["completedTrialCount"] == "2"
    trials = {t["trialId"]: t for t in out["trials"]}
    assert sorted(trials) == ["1", "2"]
    names = set()
    for trial_id, trial in trials.items():
        assert trial["state"] == "SUCCEEDED"
        spec = spec_of(svc, job_id, "master-replica-0", trial_id)
        names.add(spec["container"]["name"])
        assert f"-t{trial_id}-master-replica-0-" in spec["container"]["name"]
        lr = trial["hyperparameters"]["learning_rate"]
        assert spec["argv"][-1] == f"--learning_rate={lr}"
        # What the trainer wrote to /tmp/hypertune inside is the mounted host folder.
        metric_file = work_dir(svc, job_id, "master-replica-0", trial_id) / "hypertune"
        last = json.loads((metric_file / "output.metrics").read_text().splitlines()[-1])
        assert last["trial"] == trial_id  # CLOUD_ML_TRIAL_ID reached the container
        assert trial["finalMetric"] == {
            "trainingStep": last["global_step"],
            "objectiveValue": float(last["training/hptuning/metric"]),
        }
    assert len(names) == 2
    assert containers_of(container_engine, svc, job_id) == []


# -- images ------------------------------------------------------------------------------------


def test_a_pull_that_fails_fails_the_job_with_the_engines_reason(
    ctr_service: LiveService, container_engine: Engine
) -> None:
    svc = ctr_service
    job_id = unique_id("ctr_pull")
    image = "localhost:1/nope:1"
    svc.client().create(container_job(job_id, image))
    job = svc.wait_state(job_id, timeout=90)
    assert job["state"] == "FAILED"
    message = job["errorMessage"]
    assert message.startswith(f"Pulling the image {image} failed: "), message
    reason = message.removeprefix(f"Pulling the image {image} failed: ")
    assert "localhost:1" in reason and "error" in reason.lower(), reason
    assert messages(svc, job_id, "master-replica-0") == []  # no replica started
    notes = messages(svc, job_id, "service")
    assert f"Pulling image {image} with {container_engine.kind}." in notes, notes
    assert containers_of(container_engine, svc, job_id) == []


# -- refusals at create ------------------------------------------------------------------------


def violations(body: dict[str, Any]) -> dict[str, str]:
    details = body["error"].get("details", [])
    return {v["field"]: v["description"] for d in details for v in d.get("fieldViolations", [])}


def create(svc: LiveService, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return svc.request("POST", f"/v1/projects/{PROJECT}/jobs", json.dumps(body).encode())


@pytest.mark.parametrize(
    ("config", "image"),
    [
        ("masterConfig", "--evil"),
        ("masterConfig", "a b"),
        ("masterConfig", "-v/:/host"),
        ("workerConfig", "--privileged"),
    ],
)
def test_an_image_that_is_not_a_reference_is_refused(
    ctr_service: LiveService, tiny_image: str, config: str, image: str
) -> None:
    job_id = unique_id("ctr_bad_image")
    body = container_job(job_id, tiny_image, command=["true"])
    if config == "masterConfig":
        body["trainingInput"]["masterConfig"]["imageUri"] = image
    else:
        body["trainingInput"].update(
            scaleTier="CUSTOM",
            masterType="standard",
            workerType="standard",
            workerCount="1",
            workerConfig={"imageUri": image},
        )
    status, resp = create(ctr_service, body)
    assert status == 400, resp
    found = violations(resp)
    assert list(found) == [f"trainingInput.{config}.imageUri"], resp
    assert "is not an image reference" in found[f"trainingInput.{config}.imageUri"]
    assert ctr_service.request("GET", f"/v1/projects/{PROJECT}/jobs/{job_id}")[0] == 404


def test_gpus_on_a_host_without_gpus_are_refused(ctr_service: LiveService, tiny_image: str) -> None:
    job_id = unique_id("ctr_gpu")
    body = container_job(
        job_id,
        tiny_image,
        command=["true"],
        scaleTier="CUSTOM",
        masterType="n1-standard-4",
        masterConfig={"acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
    )
    status, resp = create(ctr_service, body)
    assert status == 400, resp
    field = "trainingInput.masterConfig.acceleratorConfig"
    found = violations(resp)
    assert list(found) == [field], resp
    assert "This machine has no GPU to give a container" in found[field]


def test_without_an_engine_a_container_job_is_refused_naming_what_to_install(
    engineless_service: LiveService,
) -> None:
    svc = engineless_service
    status, health = svc.request("GET", "/healthz")
    assert status == 200
    problem = health["containerEngine"]["problem"]
    assert "'no-such-engine'" in problem and "not on PATH" in problem, problem
    status, resp = create(svc, container_job(unique_id("ctr_none"), "localhost/x:1"))
    assert status == 400, resp
    found = violations(resp)
    assert list(found) == ["trainingInput.masterConfig.imageUri"], resp
    text = found["trainingInput.masterConfig.imageUri"]
    assert text.startswith("Custom containers need a container engine"), text
    assert "no-such-engine" in text and "apt install podman" in text, text


# -- service status ----------------------------------------------------------------------------


def status_text(svc: LiveService) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tui_app", "service", "status", "--state-dir", str(svc.state_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_service_status_names_the_engine_or_why_there_is_none(
    ctr_service: LiveService, engineless_service: LiveService, container_engine: Engine
) -> None:
    lines = status_text(ctr_service).splitlines()
    assert f"containers: {container_engine.kind} {container_engine.version}" in lines, lines
    [none] = [ln for ln in status_text(engineless_service).splitlines() if "containers:" in ln]
    assert none.startswith("containers: none: The container engine 'no-such-engine'"), none


# -- stacks (issue 43) ---------------------------------------------------------------------------


def _running(svc: LiveService, job_id: str) -> bool:
    return bool(svc.client().get(job_id)["state"] == "RUNNING")


def test_stacks_of_a_container_replica_are_read_by_its_host_pid(
    ctr_service: LiveService, container_engine: Engine, trainer_image: str, tiny_image: str
) -> None:
    """py-spy on the host reads the trainer inside the container (its process as the host sees
    it); a container that runs no Python says what it runs instead."""
    svc = ctr_service
    job_id = unique_id("ctr_stacks")
    other = unique_id("ctr_stacks_sh")
    svc.client().create(
        container_job(job_id, trainer_image, ("--steps", "100000", "--sleep", "0.05"))
    )
    svc.client().create(container_job(other, tiny_image, command=["/bin/sh", "-c", "sleep 600"]))
    try:
        for j in (job_id, other):
            wait_for(partial(_running, svc, j), f"{j} running")

        def stacks(j: str) -> dict[str, Any] | None:
            status, body = svc.request("GET", f"/v1/projects/{PROJECT}/jobs/{j}:stacks")
            assert status == 200, body
            [replica] = body["replicas"]
            return (
                replica
                if replica.get("threads") or "not a Python" in replica.get("error", "")
                else None
            )

        def training() -> dict[str, Any] | None:
            got = stacks(job_id)
            frames = [f["name"] for t in (got or {}).get("threads", ()) for f in t["frames"]]
            return got if "train" in frames else None  # past its imports, in its loop

        trainer = wait_for(training, "the trainer's stacks in its training loop")
        assert trainer["taskName"] == "master-replica-0" and trainer["pid"] > 0
        shell = wait_for(lambda: stacks(other), "the shell's refusal")
        assert shell["error"].startswith("it is not a Python process ("), shell
    finally:
        svc.client().cancel(job_id)
        svc.client().cancel(other)
    for j in (job_id, other):
        assert svc.wait_state(j, timeout=30)["state"] == "CANCELLED"
