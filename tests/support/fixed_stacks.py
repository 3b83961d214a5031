"""A fixed ``:stacks`` answer for the stacks view's snapshots and fast Pilot tests.

A live replica's dump has thread ids, pids and line numbers that differ from run to run, so a
picture of the view is drawn from this instead: the hung cluster of the sample trainer
(``--hang-at-step``) as the service answers it (the frames are the sample trainer's, abridged):
the master and two workers waiting in the trainer's ``pull`` on the parameter server, whose
request thread waits in its hang; a third worker busy in numpy (an active group, third-party
frames) and an evaluator that ended meanwhile (an error group). Read through
``JobStacks.from_json``, as the client reads the service's answer.
"""

from __future__ import annotations

from typing import Any

from tui_app.model.stacks import JobStacks

JOB_ID = "census_dist_20261122_091000"
TAKEN_AT = "2026-11-22T09:29:41.512345Z"
"""19 s before the fixed app's clock (tests/pilot/conftest.py ``FROZEN_NOW``): 09:29:41."""

LIB = "/usr/lib/python3.11"
SITE = "/opt/venv/lib/python3.11/site-packages"
TRAINER = "/tmp/replicas/census/trainer"


def frame(name: str, filename: str, line: int, short: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "filename": filename, "shortFilename": short, "line": line, **more}


def thread(
    thread_id: int, name: str, frames: list[dict[str, Any]], *, active: bool = False
) -> dict[str, Any]:
    return {
        "threadId": str(thread_id),
        "name": name,
        "active": active,
        "ownsGil": active,
        "frames": frames,
    }


def _pulling(thread_id: int, with_locals: bool) -> list[dict[str, Any]]:
    """A trainer waiting for the parameter server's answer (an XML-RPC call), and its loader
    thread; with locals, one of them looks like a secret (the first time, a toast warns)."""
    step = {"locals": [{"name": "step", "repr": "5", "arg": True}]} if with_locals else {}
    token = (
        {"locals": [{"name": "token", "repr": "'ya29.secret-looking-value'", "arg": False}]}
        if with_locals
        else {}
    )
    main = [
        frame("SocketIO.readinto", f"{LIB}/socket.py", 706, "socket.py"),
        frame("HTTPResponse.begin", f"{LIB}/http/client.py", 325, "http/client.py"),
        frame("Transport.request", f"{LIB}/xmlrpc/client.py", 1166, "xmlrpc/client.py"),
        frame("ParameterClient._call", f"{TRAINER}/ps.py", 269, "trainer/ps.py", **token),
        frame("ParameterClient.pull", f"{TRAINER}/ps.py", 305, "trainer/ps.py", **step),
        frame("train", f"{TRAINER}/task.py", 311, "trainer/task.py"),
        frame("main", f"{TRAINER}/task.py", 503, "trainer/task.py"),
        frame("<module>", f"{TRAINER}/task.py", 510, "trainer/task.py"),
    ]
    loader = [
        frame("Condition.wait", f"{LIB}/threading.py", 327, "threading.py"),
        frame("Queue.get", f"{LIB}/queue.py", 171, "queue.py"),
        frame("Thread.run", f"{LIB}/threading.py", 982, "threading.py"),
    ]
    return [thread(thread_id, "MainThread", main), thread(thread_id + 1, "loader", loader)]


def answer(*, with_locals: bool = False) -> dict[str, Any]:
    """The service's answer, as JSON."""
    ps = [
        frame("_PollLikeSelector.select", f"{LIB}/selectors.py", 415, "selectors.py"),
        frame("BaseServer.serve_forever", f"{LIB}/socketserver.py", 233, "socketserver.py"),
        frame("serve", f"{TRAINER}/ps.py", 204, "trainer/ps.py"),
        frame("main", f"{TRAINER}/task.py", 491, "trainer/task.py"),
    ]
    hang = [
        frame("Event.wait", f"{LIB}/threading.py", 629, "threading.py"),
        frame("ParameterShard._hang", f"{TRAINER}/ps.py", 71, "trainer/ps.py"),
        frame("ParameterShard.pull", f"{TRAINER}/ps.py", 84, "trainer/ps.py"),
    ]
    busy = [
        frame("dot", f"{SITE}/numpy/core/multiarray.py", 741, "numpy/core/multiarray.py"),
        frame("train_step", f"{TRAINER}/model.py", 88, "trainer/model.py"),
        frame("train", f"{TRAINER}/task.py", 296, "trainer/task.py"),
    ]
    replicas = [
        {"taskName": f"{role}-replica-{index}", "pid": pid, "threads": _pulling(tid, with_locals)}
        for role, index, pid, tid in (
            ("master", 0, 1749, 140406354819968),
            ("worker", 0, 1750, 140406354820992),
            ("worker", 1, 1751, 140406354822016),
        )
    ]
    replicas.append(
        {
            "taskName": "worker-replica-2",
            "pid": 1752,
            "threads": [thread(140406354823040, "MainThread", busy, active=True)],
        }
    )
    replicas.append(
        {
            "taskName": "ps-replica-0",
            "pid": 1748,
            "threads": [
                thread(140406354818944, "MainThread", ps),
                thread(140406354817920, "Thread-3 (process_request_thread)", hang),
            ],
        }
    )
    replicas.append({"taskName": "evaluator-replica-0", "error": "it ended meanwhile"})
    return {"takenAt": TAKEN_AT, "locals": with_locals, "replicas": replicas}


def fixed_stacks(*, with_locals: bool = False) -> JobStacks:
    """The answer read as the client reads it."""
    return JobStacks.from_json(answer(with_locals=with_locals))
