"""A replica's storage credential reaches its own job's paths and nothing else.

Two real jobs of the sample trainer run side by side on one service: x (jobDir
``gs://scope-runs/jobs/x``, its package staged inside it as gcloud stages packages, an input CSV
in its args) and y (jobDir ``gs://scope-runs/jobs/y``, its package in another bucket). With x's
credential, read from its replica's ``spec.json`` as the trainer gets it, every way into y's
objects is a 403 in GCS's shape that names what was asked and what x may reach; x still reads
its package and input and writes, reads and deletes in its own jobDir. Staged packages, x's own
included, are read-only to replicas. The user's token (the service's own) stays unscoped.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from tests.conftest import unique_id
from tests.service.test_storage_api import Reply, call, multipart_body
from tests.support.live_service import PROJECT, LiveService, basic_job

RUNS = "scope-runs"
DATA = "scope-data"
PKGS = "scope-pkgs"
X_PACKAGE = "jobs/x/packages/0123abcd/trainer-0.1.tar.gz"
Y_PACKAGE = "y/trainer-0.1.tar.gz"
Y_SECRET = "jobs/y/secret.txt"
BOUNDARY = "===============7834835860929859708=="
ROWS = "x1,x2,y\n" + "".join(f"{i % 7},{i % 3},{2 * (i % 7) - (i % 3) + 0.5}\n" for i in range(60))


@dataclass(frozen=True)
class Jobs:
    """The two running jobs, each replica's credential path prefix, and the package bytes."""

    x: str
    y: str
    x_prefix: str
    y_prefix: str
    x_secret: str
    package: bytes


def _put(svc: LiveService, bucket: str, name: str, data: bytes, prefix: str = "") -> Reply:
    """A media upload, with the user's token or (``prefix``) a replica's credential."""
    path = f"{prefix}/upload/storage/v1/b/{bucket}/o?uploadType=media&name={quote(name, safe='')}"
    return call(svc, "POST", path, data, auth=not prefix)


def _get(svc: LiveService, bucket: str, name: str, prefix: str = "", media: bool = True) -> Reply:
    alt = "?alt=media" if media else ""
    path = f"{prefix}/storage/v1/b/{bucket}/o/{quote(name, safe='')}{alt}"
    return call(svc, "GET", path, auth=not prefix)


def _list(svc: LiveService, bucket: str, prefix: str, query: str = "") -> Reply:
    return call(svc, "GET", f"{prefix}/storage/v1/b/{bucket}/o?{query}", auth=not prefix)


def _names(reply: Reply) -> tuple[list[str], list[str]]:
    assert reply.status == 200, reply.body
    body = reply.json()
    return [o["name"] for o in body.get("items", [])], body.get("prefixes", [])


def _refused(reply: Reply, *words: str) -> str:
    """A 403 in GCS's error shape whose message holds ``words``; returns the message."""
    assert reply.status == 403, (reply.status, reply.body)
    error = reply.json()["error"]
    assert error["code"] == 403 and error["status"] == "PERMISSION_DENIED", error
    assert error["errors"][0]["reason"] == "forbidden", error
    for word in words:
        assert word in error["message"], (word, error["message"])
    return str(error["message"])


def _outside(reply: Reply, uri: str) -> None:
    message = _refused(reply, uri, "is outside this replica's scope")
    assert f"may write gs://{RUNS}/jobs/x/" in message, message
    assert f"gs://{DATA}/in/train.csv" in message, message


def _credential_prefix(svc: LiveService, job_id: str) -> tuple[str, str]:
    """The replica's ``/_replica/<secret>`` path prefix and its secret, from its spec.json
    (waiting until the replica has been given it)."""
    spec_file = svc.state_dir / "jobs" / PROJECT / job_id / "master-replica-0" / "spec.json"
    deadline = time.monotonic() + 60
    while not spec_file.exists():
        assert time.monotonic() < deadline, f"{job_id} never wrote {spec_file}"
        time.sleep(0.05)
    env = json.loads(spec_file.read_text())["env"]
    prefix = urlsplit(env["STORAGE_EMULATOR_HOST"]).path
    secret = env["GOOGLE_AUTH_TOKEN_FOR_TESTING"]
    assert prefix == f"/_replica/{secret}"
    return prefix, secret


@pytest.fixture(scope="module")
def jobs(service: LiveService, trainer_sdist: Path) -> Iterator[Jobs]:
    package = trainer_sdist.read_bytes()
    for bucket, name, data in (
        (RUNS, X_PACKAGE, package),
        (PKGS, Y_PACKAGE, package),
        (DATA, "in/train.csv", ROWS.encode()),
        (DATA, "private/other.csv", b"not x's\n"),
        (RUNS, Y_SECRET, b"y's output\n"),
        (RUNS, "jobs/xy/lookalike.txt", b"not inside jobs/x\n"),
        (RUNS, "other/top.txt", b"someone else's\n"),
    ):
        assert _put(service, bucket, name, data).status == 200
    x = unique_id("scope_x")
    y = unique_id("scope_y")
    steady = ("--steps", "100000", "--sleep", "0.1", "--dim", "2", "--checkpoint-every", "10")
    client = service.client()
    client.create(
        basic_job(
            x,
            f"gs://{RUNS}/{X_PACKAGE}",
            *steady,
            "--train-file",
            f"gs://{DATA}/in/train.csv",
            jobDir=f"gs://{RUNS}/jobs/x",
        )
    )
    client.create(basic_job(y, f"gs://{PKGS}/{Y_PACKAGE}", *steady, jobDir=f"gs://{RUNS}/jobs/y"))
    try:
        for job_id in (x, y):
            job = service.wait_state(job_id, ("RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"))
            assert job["state"] == "RUNNING", job.get("errorMessage")
        x_prefix, x_secret = _credential_prefix(service, x)
        y_prefix, _ = _credential_prefix(service, y)
        yield Jobs(x, y, x_prefix, y_prefix, x_secret, package)
    finally:
        service.end_jobs([x, y])


def test_another_jobs_objects_are_out_of_reach(service: LiveService, jobs: Jobs) -> None:
    px = jobs.x_prefix
    uri = f"gs://{RUNS}/{Y_SECRET}"
    _outside(_get(service, RUNS, Y_SECRET, px), uri)
    _outside(_get(service, RUNS, Y_SECRET, px, media=False), uri)
    download = f"{px}/download/storage/v1/b/{RUNS}/o/{quote(Y_SECRET, safe='')}?alt=media"
    _outside(call(service, "GET", download, auth=False), uri)
    # TensorFlow's way: the same credential as a bearer token.
    as_bearer = call(
        service,
        "GET",
        f"/storage/v1/b/{RUNS}/o/{quote(Y_SECRET, safe='')}?alt=media",
        headers={"Authorization": f"Bearer {jobs.x_secret}"},
        auth=False,
    )
    _outside(as_bearer, uri)
    # A refusal is a refusal whether or not the object exists: nothing is revealed.
    _outside(_get(service, RUNS, "jobs/y/no-such", px), f"gs://{RUNS}/jobs/y/no-such")

    _outside(_list(service, RUNS, px, "prefix=jobs/y/"), f"gs://{RUNS}/jobs/y/")
    _outside(_list(service, PKGS, px), f"gs://{PKGS}/")

    evil = "jobs/y/secret.txt"
    _outside(_put(service, RUNS, evil, b"planted", px), uri)
    multipart = call(
        service,
        "POST",
        f"{px}/upload/storage/v1/b/{RUNS}/o?uploadType=multipart",
        multipart_body({"name": "jobs/y/planted.txt"}, b"planted", BOUNDARY),
        headers={"Content-Type": f"multipart/related; boundary='{BOUNDARY}'"},
        auth=False,
    )
    _outside(multipart, f"gs://{RUNS}/jobs/y/planted.txt")
    resumable = call(
        service,
        "POST",
        f"{px}/upload/storage/v1/b/{RUNS}/o?uploadType=resumable&name=jobs%2Fy%2Fplanted.txt",
        b"{}",
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    _outside(resumable, f"gs://{RUNS}/jobs/y/planted.txt")
    deleted = call(
        service, "DELETE", f"{px}/storage/v1/b/{RUNS}/o/{quote(Y_SECRET, safe='')}", auth=False
    )
    _refused(deleted, f"Deleting {uri}", "is outside this replica's scope")

    # y's objects are as y left them, and nothing was planted.
    assert _get(service, RUNS, Y_SECRET).body == b"y's output\n"
    assert _get(service, RUNS, "jobs/y/planted.txt").status == 404
    # Outside x's paths but in x's own input bucket: refused too.
    _outside(_get(service, DATA, "private/other.csv", px), f"gs://{DATA}/private/other.csv")


def test_a_replica_lists_only_its_jobs_buckets(service: LiveService, jobs: Jobs) -> None:
    def bucket_names(reply: Reply) -> set[str]:
        assert reply.status == 200, reply.body
        return {b["name"] for b in reply.json().get("items", [])}

    everything = bucket_names(call(service, "GET", "/storage/v1/b"))
    assert {RUNS, DATA, PKGS} <= everything
    mine = bucket_names(call(service, "GET", f"{jobs.x_prefix}/storage/v1/b", auth=False))
    assert mine == {RUNS, DATA}
    theirs = bucket_names(call(service, "GET", f"{jobs.y_prefix}/storage/v1/b", auth=False))
    assert theirs == {RUNS, PKGS}

    px = jobs.x_prefix
    assert call(service, "GET", f"{px}/storage/v1/b/{RUNS}", auth=False).status == 200
    _refused(call(service, "GET", f"{px}/storage/v1/b/{PKGS}", auth=False), f"gs://{PKGS}")
    layout = call(service, "GET", f"{px}/storage/v1/b/{PKGS}/storageLayout", auth=False)
    _refused(layout, f"gs://{PKGS}")
    created = call(
        service,
        "POST",
        f"{px}/storage/v1/b",
        json.dumps({"name": "scope-new-bucket"}).encode(),
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    _refused(created, "may not create or delete buckets")
    _refused(
        call(service, "DELETE", f"{px}/storage/v1/b/{DATA}", auth=False),
        "may not create or delete buckets",
    )
    assert "scope-new-bucket" not in bucket_names(call(service, "GET", "/storage/v1/b"))


def test_staged_packages_are_read_only_to_replicas(service: LiveService, jobs: Jobs) -> None:
    px = jobs.x_prefix
    # y's package: outside x's scope altogether.
    _refused(_put(service, PKGS, Y_PACKAGE, b"attacker's code", px), f"gs://{PKGS}/{Y_PACKAGE}")
    # x's own package lies in x's jobDir, which x may write: still refused, every way.
    own = f"gs://{RUNS}/{X_PACKAGE}"
    read_only = "staged packages are read-only to replicas"
    _refused(_put(service, RUNS, X_PACKAGE, b"attacker's code", px), own, read_only)
    quoted = quote(X_PACKAGE, safe="")
    _refused(call(service, "DELETE", f"{px}/storage/v1/b/{RUNS}/o/{quoted}", auth=False), read_only)
    assert _put(service, RUNS, "jobs/x/evil.tar.gz", b"attacker's code", px).status == 200
    rewrite = call(
        service,
        "POST",
        f"{px}/storage/v1/b/{RUNS}/o/jobs%2Fx%2Fevil.tar.gz/rewriteTo/b/{RUNS}/o/{quoted}",
        b"{}",
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    _refused(rewrite, read_only)
    resumable = call(
        service,
        "POST",
        f"{px}/upload/storage/v1/b/{RUNS}/o?uploadType=resumable&name={quoted}",
        b"{}",
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    _refused(resumable, read_only)
    # The owners read back exactly what they staged.
    assert _get(service, PKGS, Y_PACKAGE).body == jobs.package
    assert _get(service, RUNS, X_PACKAGE).body == jobs.package
    # The user (the service's own token) is not a replica: it may replace a package.
    assert _put(service, RUNS, X_PACKAGE, jobs.package).status == 200


def test_a_replica_reaches_its_own_paths(service: LiveService, jobs: Jobs) -> None:
    px = jobs.x_prefix
    package = _get(service, RUNS, X_PACKAGE, px)
    assert (package.status, package.body) == (200, jobs.package)
    data = _get(service, DATA, "in/train.csv", px)
    assert (data.status, data.body) == (200, ROWS.encode())
    listed, _ = _names(_list(service, DATA, px, "prefix=in/"))
    assert listed == ["in/train.csv"]

    stored = _put(service, RUNS, "jobs/x/notes/a.txt", b"mine", px)
    assert stored.status == 200, stored.body
    assert _get(service, RUNS, "jobs/x/notes/a.txt", px).body == b"mine"
    copied = call(
        service,
        "POST",
        f"{px}/storage/v1/b/{RUNS}/o/jobs%2Fx%2Fnotes%2Fa.txt/copyTo/b/{RUNS}/o/jobs%2Fx%2Fnotes%2Fb.txt",
        b"{}",
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    assert copied.status == 200, copied.body
    composed = call(
        service,
        "POST",
        f"{px}/storage/v1/b/{RUNS}/o/jobs%2Fx%2Fnotes%2Fab.txt/compose",
        json.dumps(
            {"sourceObjects": [{"name": "jobs/x/notes/a.txt"}, {"name": "jobs/x/notes/b.txt"}]}
        ).encode(),
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    assert composed.status == 200, composed.body
    assert _get(service, RUNS, "jobs/x/notes/ab.txt", px).body == b"minemine"
    for name in ("a.txt", "b.txt", "ab.txt"):
        path = f"{px}/storage/v1/b/{RUNS}/o/{quote('jobs/x/notes/' + name, safe='')}"
        assert call(service, "DELETE", path, auth=False).status == 204
    assert _get(service, RUNS, "jobs/x/notes/a.txt", px).status == 404
    # The trainer itself writes its checkpoints there with the same credential.
    written = service.state_dir / "jobs" / PROJECT / jobs.x / "objects-written.jsonl"
    deadline = time.monotonic() + 60
    while not (written.exists() and "jobs/x/checkpoints/" in written.read_text()):
        assert time.monotonic() < deadline, "the trainer wrote no checkpoint"
        time.sleep(0.1)


def test_copying_another_jobs_objects_in_is_forbidden(service: LiveService, jobs: Jobs) -> None:
    px = jobs.x_prefix
    src = quote(Y_SECRET, safe="")
    for verb in ("copyTo", "rewriteTo"):
        reply = call(
            service,
            "POST",
            f"{px}/storage/v1/b/{RUNS}/o/{src}/{verb}/b/{RUNS}/o/jobs%2Fx%2Fstolen.txt",
            b"{}",
            headers={"Content-Type": "application/json"},
            auth=False,
        )
        _outside(reply, f"gs://{RUNS}/{Y_SECRET}")
    # Nor may x copy its own objects out to y, or compose from y's.
    assert _put(service, RUNS, "jobs/x/mine.txt", b"mine", px).status == 200
    out = call(
        service,
        "POST",
        f"{px}/storage/v1/b/{RUNS}/o/jobs%2Fx%2Fmine.txt/copyTo/b/{RUNS}/o/jobs%2Fy%2Fmine.txt",
        b"{}",
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    _outside(out, f"gs://{RUNS}/jobs/y/mine.txt")
    composed = call(
        service,
        "POST",
        f"{px}/storage/v1/b/{RUNS}/o/jobs%2Fx%2Fstolen.txt/compose",
        json.dumps({"sourceObjects": [{"name": "jobs/x/mine.txt"}, {"name": Y_SECRET}]}).encode(),
        headers={"Content-Type": "application/json"},
        auth=False,
    )
    _outside(composed, f"gs://{RUNS}/{Y_SECRET}")
    assert _get(service, RUNS, "jobs/x/stolen.txt").status == 404
    assert _get(service, RUNS, "jobs/y/mine.txt").status == 404


def test_a_listing_on_the_way_down_shows_only_the_way(service: LiveService, jobs: Jobs) -> None:
    px = jobs.x_prefix
    everything, _ = _names(_list(service, RUNS, ""))
    assert Y_SECRET in everything and "other/top.txt" in everything
    # The bucket's top and jobs/: only what leads to x's jobDir.
    assert _names(_list(service, RUNS, px, "delimiter=/")) == ([], ["jobs/"])
    assert _names(_list(service, RUNS, px, "prefix=jobs/&delimiter=/")) == ([], ["jobs/x/"])
    items, _ = _names(_list(service, RUNS, px))
    assert items and all(n.startswith("jobs/x/") for n in items), items
    assert X_PACKAGE in items
    # "jobs/x" as a bare prefix also matches jobs/xy/: those stay hidden.
    items, _ = _names(_list(service, RUNS, px, "prefix=jobs/x"))
    assert items and all(n.startswith("jobs/x/") for n in items), items
    # Small pages of an ancestor may come back short: following the tokens finds x's objects.
    seen: list[str] = []
    token = ""
    for _ in range(1000):
        reply = _list(service, RUNS, px, f"maxResults=1{token}")
        page, _ = _names(reply)
        seen += page
        next_token = reply.json().get("nextPageToken")
        if not next_token:
            break
        token = f"&pageToken={quote(next_token)}"
    assert seen and all(n.startswith("jobs/x/") for n in seen) and X_PACKAGE in seen
    # An input bucket's top shows only the input.
    assert _names(_list(service, DATA, px)) == (["in/train.csv"], [])
    _outside(_list(service, RUNS, px, "prefix=other/"), f"gs://{RUNS}/other/")
    _outside(_list(service, RUNS, px, "prefix=jobs/xy/"), f"gs://{RUNS}/jobs/xy/")
    # What gfile asks on the way down is answered, not refused: the folder object "jobs" (404
    # here: a folder is no object) and the placeholder "jobs/".
    assert _get(service, RUNS, "jobs", px, media=False).status == 404
    assert _get(service, RUNS, "jobs/", px, media=False).status == 404
    _outside(_get(service, RUNS, "other", px, media=False), f"gs://{RUNS}/other")


def test_a_resumable_upload_stays_with_the_replica_that_began_it(
    service: LiveService, jobs: Jobs
) -> None:
    px, py = jobs.x_prefix, jobs.y_prefix
    started = call(
        service,
        "POST",
        f"{px}/upload/storage/v1/b/{RUNS}/o?uploadType=resumable&name=jobs%2Fx%2Fbig.bin",
        b"{}",
        headers={"Content-Type": "application/json", "X-Upload-Content-Length": "6"},
        auth=False,
    )
    assert started.status == 200, started.body
    location = urlsplit(started.headers["location"])
    assert location.path.startswith(px)
    session = location.path[len(px) :] + "?" + location.query
    hijack = call(
        service,
        "PUT",
        py + session,
        b"planted",
        headers={"Content-Range": "bytes 0-6/7"},
        auth=False,
    )
    _refused(hijack, "only the replica that started an upload may continue it")
    done = call(
        service,
        "PUT",
        px + session,
        b"xxxxxx",
        headers={"Content-Range": "bytes 0-5/6"},
        auth=False,
    )
    assert done.status == 200, done.body
    assert _get(service, RUNS, "jobs/x/big.bin").body == b"xxxxxx"
