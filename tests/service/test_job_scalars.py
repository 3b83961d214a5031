"""The metrics view's reader against a real service: event files a real trainer writes to gs://
through the storage API, hypertune reports, printed metrics, and what it says when there is
nothing (yet) or the storage refuses (401, 403, a missing bucket, a local jobDir whose modes
refuse the reader); then ``tui-app jobs metrics`` prints the same numbers, one trial's alone
with ``--trial``.

The trainer is the sample trainer (examples/trainer): its chief writes the training loss under
``<job-dir>/train`` and the held-out loss under ``<job-dir>/eval`` as TensorFlow event files,
and prints ``step N loss=L`` lines.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import unique_id
from tests.support.live_service import PROJECT, LiveService, basic_job, grid_search
from tests.support.scalar_polls import Points, drain, live_scalars, poll_until
from tui_app.api.connection import Connection
from tui_app.api.errors import ApiCallError
from tui_app.api.job_outputs import OutputFile, output_folder
from tui_app.api.job_scalars import JobScalars, ScalarPoll
from tui_app.api.jobs_client import make_credentials
from tui_app.model.metrics.tf_event_writer import event_record, file_version_record

BUCKET = "metrics-bucket"


def _logged_losses(svc: LiveService, job_id: str) -> list[tuple[int, float]]:
    entries = svc.entries(
        f'resource.labels.job_id="{job_id}" AND resource.labels.task_name="master-replica-0"'
    )
    out = []
    for e in entries:
        text = e.get("textPayload") or (e.get("jsonPayload") or {}).get("message") or ""
        if text.startswith("step ") and " loss=" in text:
            step, loss = text.split()[1], text.split("loss=")[1].split()[0]
            out.append((int(step), float(loss)))
    return out


def _upload(svc: LiveService, uri: str, data: bytes) -> None:
    bucket, _, name = uri.removeprefix("gs://").partition("/")
    status, body = svc.request(
        "POST",
        f"/upload/storage/v1/b/{bucket}/o?uploadType=media&name={urllib.parse.quote(name)}",
        data,
        headers={"Content-Type": "application/octet-stream"},
    )
    assert status == 200, body


@pytest.mark.timeout(120)
def test_a_running_jobs_event_files_are_read_live_then_to_the_end(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("curves")
    job_dir = f"gs://{BUCKET}/{job_id}"
    args = ("--steps", "120", "--sleep", "0.05", "--log-every", "10", "--checkpoint-every", "50")
    service.client().create(basic_job(job_id, package_uri, *args, jobDir=job_dir))
    scalars = live_scalars(service, job_id)

    # Live: points arrive while the job still runs (the trainer flushes once a second).
    def running_with_points(_points: Points, poll: ScalarPoll) -> bool:
        return bool(poll.batches) and poll.job is not None and poll.job["state"] == "RUNNING"

    poll_until(scalars, running_with_points, "a point while the job ran", timeout=60)
    drain(scalars)
    # (the first live batch is in the reader's past now; read everything again, fresh)
    points, last = drain(live_scalars(service, job_id))
    assert last.job is not None and last.job["state"] == "SUCCEEDED"

    train = points[("events", "train", "loss", "")]
    logged = _logged_losses(service, job_id)
    assert [s for s, _, _ in train] == [s for s, _ in logged]
    assert [v for _, _, v in train] == pytest.approx([v for _, v in logged], abs=1e-6)
    assert all(math.isfinite(w) and w > 1.7e9 for _, w, _ in train)
    evals = points[("events", "eval", "loss", "")]
    assert [s for s, _, _ in evals] == [50, 100, 120]
    # Event files were found, so the printed metrics are not read as a second copy.
    assert not any(k[0] == "logs" for k in points)
    events = next(s for s in last.statuses if s.source == "events")
    assert events.text == f"2 event files under {job_dir} (runs: eval, train)."
    assert not events.problem


@pytest.mark.timeout(120)
def test_without_event_files_the_printed_metrics_are_the_curves(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("printed")
    args = ("--steps", "60", "--log-every", "10")
    service.client().create(basic_job(job_id, package_uri, *args))  # no jobDir: no events
    points, last = drain(live_scalars(service, job_id))
    printed = points[("logs", "master-replica-0", "loss", "")]
    logged = _logged_losses(service, job_id)
    assert [(s, v) for s, _, v in printed] == logged
    statuses = {s.source: s for s in last.statuses}
    assert statuses["events"].text == "No event files: the job has no jobDir to look in."
    assert "master-replica-0" in statuses["logs"].text


@pytest.mark.timeout(60)
def test_nothing_yet_says_where_it_looked_and_that_it_looks_again(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("quiet")
    bucket = f"quiet-{time.monotonic_ns()}"  # a bucket nothing has written to yet
    job_dir = f"gs://{bucket}/{job_id}"
    # A module that is not in the package: the job fails at once, having written nothing.
    body = basic_job(job_id, package_uri, jobDir=job_dir, pythonModule="trainer.not_there")
    client = service.client()
    client.create(body)
    service.wait_state(job_id)
    conn = service.connection()

    def as_if(state: str) -> JobScalars:
        def read() -> dict[str, Any]:
            return {**client.get(job_id), "state": state}

        return JobScalars(lambda: conn, PROJECT, job_id, read_job=read)

    def events_line(scalars: JobScalars) -> Any:
        return next(s for s in scalars.poll().statuses if s.source == "events")

    # While a job runs, the view says it will look again; once it has ended, it does not.
    running, ended = as_if("RUNNING"), as_if("FAILED")
    assert events_line(running).text == (
        f"No TensorFlow event files under {job_dir} yet (no bucket {bucket} yet); "
        "looking again every 1 s."
    )
    assert events_line(ended).text == (
        f"No TensorFlow event files under {job_dir} yet (no bucket {bucket} yet)."
    )
    # The bucket exists (something else was written), and still no event file in it.
    _upload(service, f"{job_dir}/checkpoint", b"model_checkpoint_path: x")
    line = events_line(running)
    assert line.text == f"No TensorFlow event files under {job_dir} yet; looking again every 1 s."
    assert not line.problem


def test_a_storage_refusal_is_said_in_words(service: LiveService) -> None:
    folder = output_folder(f"gs://{BUCKET}/any", service.connection(token="wrong-token"))
    with pytest.raises(Exception) as refused:
        folder.files()
    assert str(getattr(refused.value, "message", refused.value)).startswith(
        f"401 Unauthorized (the credentials were refused) listing gs://{BUCKET}/any"
    )


@pytest.mark.timeout(60)
def test_a_missing_bucket_is_said_in_words_where_it_is_a_mistake(
    service: LiveService, package_uri: str
) -> None:
    """On the embedded service a missing bucket is only nothing written yet (see
    ``test_nothing_yet_says_where_it_looked_and_that_it_looks_again``); through a URL profile
    (``local`` false, as for Cloud Storage itself) it is a mistake in the jobDir, said as one."""
    job_id = unique_id("nobucket")
    bucket = f"never-{time.monotonic_ns()}"
    job_dir = f"gs://{bucket}/{job_id}"
    # A module that is not in the package: fails at once, writes nothing.
    body = basic_job(job_id, package_uri, jobDir=job_dir, pythonModule="trainer.not_there")
    client = service.client()
    client.create(body)
    service.wait_state(job_id)
    url_profile = Connection(service.url, make_credentials(service.token), "url", local=False)

    with pytest.raises(ApiCallError) as missing:
        output_folder(job_dir, url_profile).files()
    assert (missing.value.status_code, missing.value.status) == (404, "NOT_FOUND")
    assert missing.value.message == (
        f"404 Not found listing {job_dir}: The specified bucket does not exist: {bucket}"
    )
    # The view's line says the same, as a problem, and the view goes on (no exception).
    scalars = JobScalars(lambda: url_profile, PROJECT, job_id, read_job=lambda: client.get(job_id))
    events = next(s for s in scalars.poll().statuses if s.source == "events")
    assert events.problem
    assert events.text == missing.value.message


@contextmanager
def _forwarded(svc: LiveService) -> Iterator[str]:
    """The service behind a port forward, as ``ssh -L <other port>:127.0.0.1:<port>`` makes one:
    the same bytes both ways, on another local port. Yields the URL to call it at."""
    target = ("127.0.0.1", int(svc.url.rsplit(":", 1)[1]))
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()
    open_sockets: list[socket.socket] = []

    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def serve() -> None:
        while not stop.is_set():
            try:
                near, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            near.settimeout(None)
            far = socket.create_connection(target)
            open_sockets.extend((near, far))
            for src, dst in ((near, far), (far, near)):
                threading.Thread(target=pump, args=(src, dst), daemon=True).start()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        server.join(10)
        listener.close()
        for sock in open_sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.mark.timeout(60)
def test_a_storage_403_is_said_in_words_with_the_servers_reason(service: LiveService) -> None:
    """The local service's storage answers a caller with a good token 403 in one case only: a
    request whose Host is not the service's own, which is what a port forward delivers (the
    service refuses it as it would a DNS-rebinding web page). Listing and reading say it in
    words, with the server's reason."""
    name = f"refused/{time.monotonic_ns()}/events.out.tfevents.1.host"
    _upload(service, f"gs://{BUCKET}/{name}", file_version_record(1.7e9))
    with _forwarded(service) as url:
        port = url.rsplit(":", 1)[1]
        conn = Connection(url, make_credentials(service.token), "forwarded", local=True)
        folder = output_folder(f"gs://{BUCKET}/refused", conn)
        with pytest.raises(ApiCallError) as listing:
            folder.files()
        with pytest.raises(ApiCallError) as reading:
            folder.read(OutputFile(f"gs://{BUCKET}/{name}", 10), 0)
    reason = f"Host '127.0.0.1:{port}' is not this service: it answers only requests addressed"
    assert (listing.value.status_code, listing.value.status) == (403, "PERMISSION_DENIED")
    assert listing.value.message.startswith(
        f"403 Forbidden listing gs://{BUCKET}/refused: " + reason
    ), listing.value.message
    assert (reading.value.status_code, reading.value.status) == (403, "PERMISSION_DENIED")
    # A download's error is the server's reason too, not the answer's JSON and the download
    # library's status tuple around it.
    assert reading.value.message.startswith(
        f"403 Forbidden reading gs://{BUCKET}/{name}: " + reason
    ), reading.value.message
    assert "{" not in reading.value.message and "Request failed" not in reading.value.message


def _without_read_override() -> list[str]:
    """The argv prefix that runs a command as this user, but bound by file modes: root reads a
    mode-000 folder through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so root's command runs
    without those two (``setpriv``); anyone else's runs as it is."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux): a file mode cannot stop root")
    return [setpriv, "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _cli_refused(
    svc: LiveService, job_id: str, path: Path, prefix: Sequence[str]
) -> subprocess.CompletedProcess[str]:
    """``tui-app jobs metrics JOB`` while ``path`` has mode 000 (its mode is put back)."""
    mode = path.stat().st_mode & 0o777
    path.chmod(0)
    try:
        return _cli(svc, job_id, prefix=prefix)
    finally:
        path.chmod(mode)


def _sources(done: subprocess.CompletedProcess[str]) -> set[tuple[str, str]]:
    assert done.returncode == 0, done.stderr
    return {(r["source"], r["run"]) for r in csv.DictReader(io.StringIO(done.stdout))}


@pytest.mark.timeout(120)
def test_a_local_job_dir_it_may_not_read_is_said_and_what_it_can_read_is_printed(
    service: LiveService, package_uri: str, tmp_path: Path
) -> None:
    """A jobDir that is a local path (the embedded service accepts one), read by
    ``tui-app jobs metrics`` as a user the folder's mode refuses."""
    job_id = unique_id("localdir")
    out = tmp_path / "out"
    args = ("--steps", "40", "--log-every", "10", "--checkpoint-every", "20")
    service.client().create(basic_job(job_id, package_uri, *args, jobDir=str(out)))
    assert service.wait_state(job_id)["state"] == "SUCCEEDED"
    prefix = _without_read_override()
    # Where the modes allow it, the same user reads both runs' event files.
    readable = _cli(service, job_id, prefix=prefix)
    assert _sources(readable) == {("events", "train"), ("events", "eval")}
    assert readable.stderr == ""

    # The folder itself refused: said, and the printed metrics stand in for the event files.
    listing = _cli_refused(service, job_id, out, prefix)
    assert listing.stderr.splitlines() == [f"warning: Permission denied listing {out}"]
    assert _sources(listing) == {("logs", "master-replica-0")}

    # One event file refused: the file before it (eval/ sorts first) is still read.
    (train,) = (out / "train").glob("events.out.tfevents.*")
    reading = _cli_refused(service, job_id, train, prefix)
    assert reading.stderr.splitlines() == [
        f"warning: 2 event files under {out} (runs: eval); "
        f"train/{train.name}: Permission denied reading {train}."
    ]
    assert _sources(reading) == {("events", "eval")}

    # A folder below the jobDir refused: left out and said; the rest is read.
    folder = out / "train"
    skipping = _cli_refused(service, job_id, folder, prefix)
    assert skipping.stderr.splitlines() == [
        f"warning: 1 event file under {out} (runs: eval); "
        f"cannot list {folder} (permission denied or gone)."
    ]
    assert _sources(skipping) == {("events", "eval")}


@pytest.mark.timeout(60)
def test_corrupt_torn_and_impostor_files_are_counted_never_fatal(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("corrupt")
    job_dir = f"gs://{BUCKET}/{job_id}"
    good = [event_record(step, 1.7e9 + step, "loss", 1.0 / step) for step in range(1, 6)]
    bad = bytearray(good[2])
    bad[-6] ^= 0xFF  # a flipped bit in the data: its CRC no longer matches
    whole = file_version_record(1.7e9) + good[0] + good[1] + bytes(bad) + good[3] + good[4]
    _upload(service, f"{job_dir}/run/events.out.tfevents.1.host", whole[:-7])  # torn at the end
    # Five impostors (not event files, with tfevents in their names): three are named in the
    # sources line, the others counted.
    for n in range(5):
        _upload(service, f"{job_dir}/fake/events.out.tfevents.2{n}.host", b"not an event" * 10)
    # A non-chief Keras worker's copy (MultiWorkerMirroredStrategy): not a run of its own.
    copy = f"{job_dir}/run/workertemp_1/events.out.tfevents.3.host"
    _upload(service, copy, file_version_record(1.7e9) + good[0])
    service.client().create(basic_job(job_id, package_uri, "--steps", "5", jobDir=job_dir))
    service.wait_state(job_id)
    scalars = live_scalars(service, job_id)
    points, last = drain(scalars)
    assert not [k for k in points if "workertemp" in k[1]]
    steps = [s for s, _, _ in points[("events", "run", "loss", "")]]
    assert steps == [1, 2, 4]  # 3 is corrupt, 5 is torn (not yet complete)
    events = next(s for s in last.statuses if s.source == "events")
    assert events.problem
    assert "1 corrupt record skipped" in events.text
    assert "fake/events.out.tfevents.20.host: " in events.text
    assert "fake/events.out.tfevents.22.host: " in events.text
    assert "fake/events.out.tfevents.23.host" not in events.text
    assert "2 more like it" in events.text
    # The torn record completes: only it is read, from where the reader stopped.
    _upload(service, f"{job_dir}/run/events.out.tfevents.1.host", whole)
    poll = scalars.poll()
    assert [(b.key.run, b.steps) for b in poll.batches] == [("run", [5])]


def _tuning_job(job_id: str, package_uri: str) -> dict[str, Any]:
    """Two trials of the sample trainer (a grid of two learning rates, both at once), each
    reporting its held-out loss at steps 20, 40 and 60 and writing event files under
    ``<jobDir>/<trialId>/``."""
    return basic_job(
        job_id,
        package_uri,
        "--steps",
        "60",
        "--checkpoint-every",
        "20",
        jobDir=f"gs://{BUCKET}/{job_id}",
        hyperparameters=grid_search("learning_rate", [0.01, 0.1], parallel=2),
    )


@pytest.mark.timeout(180)
def test_a_tuning_jobs_trials_report_their_curves(service: LiveService, package_uri: str) -> None:
    job_id = unique_id("tuned")
    service.client().create(_tuning_job(job_id, package_uri))
    points, _ = drain(live_scalars(service, job_id), timeout=150)
    tag = "training/hptuning/metric"
    for trial in ("1", "2"):
        reports = points[("hypertune", "", tag, trial)]
        assert [s for s, _, _ in reports] == [20, 40, 60]
        assert all(math.isnan(w) for _, w, _ in reports)
        # The trial's own event files (the trainer appends the trial id to its job dir).
        evals = points[("events", "eval", "loss", trial)]
        assert [v for _, _, v in evals] == pytest.approx([v for _, _, v in reports], rel=1e-6)
    # One trial's view reads only that trial's folder.
    one = drain(live_scalars(service, job_id, trial="2"))[0]
    assert {k[3] for k in one} == {"2"}
    assert ("events", "eval", "loss", "2") in one


def _cli(
    svc: LiveService, *args: str, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """``tui-app jobs metrics ARGS`` on ``svc`` (``prefix``: what to run it under)."""
    argv = [*prefix, sys.executable, "-m", "tui_app", "jobs", "metrics", *args]
    return subprocess.run(
        [*argv, "--state-dir", str(svc.state_dir), "--project", PROJECT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.timeout(120)
def test_jobs_metrics_prints_what_the_view_reads(service: LiveService, package_uri: str) -> None:
    job_id = unique_id("cli")
    job_dir = f"gs://{BUCKET}/{job_id}"
    args = ("--steps", "40", "--log-every", "10", "--checkpoint-every", "20")
    service.client().create(basic_job(job_id, package_uri, *args, jobDir=job_dir))
    service.wait_state(job_id)
    view = drain(live_scalars(service, job_id))[0]

    done = _cli(service, job_id)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert list(rows[0]) == ["step", "wall_time", "value", "run", "tag", "source"]
    by_series: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for r in rows:
        by_series.setdefault((r["source"], r["run"], r["tag"]), []).append(
            (int(r["step"]), float(r["value"]))
        )
    assert by_series == {(k[0], k[1], k[2]): [(s, v) for s, _, v in pts] for k, pts in view.items()}

    as_json = _cli(service, job_id, "--format", "json", "--tag", "loss")
    assert as_json.returncode == 0, as_json.stderr
    doc: list[dict[str, Any]] = json.loads(as_json.stdout)
    assert {(d["run"], d["source"]) for d in doc} == {("train", "events"), ("eval", "events")}

    missing = _cli(service, job_id, "--tag", "accuracy")
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == [
        f"error: --tag accuracy: no such tag in {job_id}; its tags are:",
        "  loss",
    ]
    plain = _cli(service, job_id, "--trial", "1")
    assert plain.returncode == 2 and not plain.stdout
    assert plain.stderr.strip() == (
        f"error: --trial 1: job {job_id} is not a hyperparameter tuning job: leave --trial out"
    )


@pytest.mark.timeout(180)
def test_jobs_metrics_trial_prints_that_trials_series_alone(
    service: LiveService, package_uri: str
) -> None:
    job_id = unique_id("cli_trial")
    service.client().create(_tuning_job(job_id, package_uri))
    assert service.wait_state(job_id, timeout=150)["state"] == "SUCCEEDED"
    views = {t: drain(live_scalars(service, job_id, trial=t))[0] for t in ("1", "2")}
    tag = "training/hptuning/metric"

    one = _cli(service, job_id, "--trial", "1")
    assert one.returncode == 0, one.stderr
    rows = list(csv.DictReader(io.StringIO(one.stdout)))
    assert list(rows[0]) == ["step", "wall_time", "value", "run", "tag", "source", "trial"]
    by_series: dict[tuple[str, str, str, str], list[tuple[int, float]]] = {}
    for r in rows:
        key = (r["source"], r["run"], r["tag"], r["trial"])
        by_series.setdefault(key, []).append((int(r["step"]), float(r["value"])))
    assert by_series == {k: [(s, v) for s, _, v in pts] for k, pts in views["1"].items()}
    assert {k[3] for k in by_series} == {"1"}
    assert {("hypertune", "", tag, "1"), ("events", "eval", "loss", "1")} <= set(by_series)
    # Hypertune reports carry no wall time: an empty cell, not a made-up one.
    assert {r["wall_time"] for r in rows if r["source"] == "hypertune"} == {""}

    as_json = _cli(service, job_id, "--trial", "2", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    doc: list[dict[str, Any]] = json.loads(as_json.stdout)
    got = {
        (d["source"], d["run"], d["tag"], d["trial"]): [(p[0], p[2]) for p in d["points"]]
        for d in doc
    }
    assert got == {k: [(s, v) for s, _, v in pts] for k, pts in views["2"].items()}
    assert ("hypertune", "", tag, "2") in got
    reports = next(d for d in doc if d["source"] == "hypertune")
    assert [p[1] for p in reports["points"]] == [None, None, None]

    missing = _cli(service, job_id, "--trial", "3")
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr.splitlines() == [
        f"error: --trial 3: job {job_id} has no such trial (trials: 1, 2)"
    ]
