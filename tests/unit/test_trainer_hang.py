"""The sample trainer's ``--hang-at-step``: a job that hangs the way a real distributed job does.

Stall detection and the stack dump view are tested against it, so what matters is what they
see: after the one ``hanging at step N (--hang-at-step)`` line, no replica prints anything or
uses CPU, yet every one is alive; the trainers wait inside their ``pull`` RPC (with parameter
servers) or in ``wait_for_data`` (alone); and SIGTERM still ends every process promptly.
The replicas are real processes started as the service starts them (``python -m
trainer.task`` with ``TF_CONFIG``), as in ``test_trainer_example.py``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.unit.test_trainer_example import free_ports, trainer_env
from tui_app.local.execution import stack_dumps

HANG_AT = 3
HANG_LINE = f"hanging at step {HANG_AT} (--hang-at-step)"
QUIET_SECONDS = 2.0
"""The window in which a hung replica must print nothing and use (almost) no CPU."""
MAX_CPU_SECONDS = 0.05
STARTUP_SECONDS = 15.0
"""How long the replicas may take to reach the hang (a loaded machine starts Python slowly)."""
SIGTERM_SECONDS = 5.0
PY_SPY_ENV = Path("/tmp/pyspyenv/bin/py-spy")
"""A py-spy installed apart from the project, where there is one; else the service's own."""
FRAME = re.compile(r"^\s+(?P<qualname>\S+) \((?P<file>[^:()]+):\d+\)$")
"""A py-spy dump frame: ``    SocketIO.readinto (socket.py:706)``."""


@dataclass
class Replica:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text()

    def cpu_seconds(self) -> float:
        times = psutil.Process(self.process.pid).cpu_times()
        return float(times.user + times.system)


Start = Callable[[str, dict[str, Any] | None], Replica]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Start a replica (``name``, its ``TF_CONFIG`` or None) with ``--hang-at-step``; any still
    running at the end is killed."""
    started: list[Replica] = []
    args = ["--steps", "100", "--log-every", "1", "--hang-at-step", str(HANG_AT)]

    def start_replica(name: str, tf_config: dict[str, Any] | None) -> Replica:
        log = tmp_path / f"{name}.log"
        with open(log, "wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "trainer.task", *args],
                env=trainer_env(tmp_path, tf_config),
                cwd=tmp_path,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        started.append(Replica(name, process, log))
        return started[-1]

    yield start_replica
    for replica in started:
        if replica.process.poll() is None:
            replica.process.kill()
            replica.process.wait()


def logs(replicas: list[Replica]) -> str:
    return "\n".join(f"--- {r.name}:\n{r.output()}" for r in replicas)


def wait_for_line(replica: Replica, everyone: list[Replica]) -> None:
    """Poll until ``replica`` has printed the hang line (every replica must still be alive)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while HANG_LINE not in replica.output():
        for other in everyone:
            assert other.process.poll() is None, f"{other.name} exited\n{logs(everyone)}"
        assert time.monotonic() < deadline, (
            f"no {HANG_LINE!r} from {replica.name}\n{logs(everyone)}"
        )
        time.sleep(0.05)


def assert_hung_quietly(replicas: list[Replica]) -> None:
    """Over QUIET_SECONDS: every replica alive, no new output, CPU time growing < 0.05 s."""
    before = {r.name: (r.output(), r.cpu_seconds()) for r in replicas}
    time.sleep(QUIET_SECONDS)  # the measured interval, not a wait for a state
    for replica in replicas:
        output, cpu = before[replica.name]
        assert replica.process.poll() is None, f"{replica.name} exited\n{logs(replicas)}"
        assert replica.output() == output, f"{replica.name} printed after the hang began"
        used = replica.cpu_seconds() - cpu
        assert used < MAX_CPU_SECONDS, f"{replica.name} used {used:.3f} s of CPU while hung"


def assert_sigterm_ends(replicas: list[Replica], expected: dict[str, int]) -> None:
    """SIGTERM to every replica at once, as the service stops a job: all exit promptly."""
    for replica in replicas:
        replica.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + SIGTERM_SECONDS
    for replica in replicas:
        try:
            code = replica.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pytest.fail(f"{replica.name} still running {SIGTERM_SECONDS} s after SIGTERM")
        assert code == expected[replica.name], f"{replica.name} exited {code}\n{logs(replicas)}"


def assert_waits_without_timeout(replica: Replica, ps_port: int) -> None:
    """The replica's connection to the ps has no timeout, so its wait for an answer is unbounded.

    CPython makes a socket with a timeout non-blocking (it waits in poll() and gives up after
    the timeout); one without stays blocking: O_NONBLOCK in its /proc fdinfo tells them apart.
    """
    process = psutil.Process(replica.process.pid)
    connections = [
        c for c in process.net_connections(kind="tcp") if c.raddr and c.raddr.port == ps_port
    ]
    assert connections, f"{replica.name} has no connection to the ps"
    for connection in connections:
        fdinfo = Path(f"/proc/{process.pid}/fdinfo/{connection.fd}").read_text()
        flags = re.search(r"^flags:\s+([0-7]+)$", fdinfo, re.MULTILINE)
        assert flags, fdinfo
        assert not int(flags[1], 8) & os.O_NONBLOCK, f"{replica.name}'s RPC has a timeout"


def py_spy() -> str | None:
    """The py-spy to dump the replicas with, or None where none is installed."""
    if PY_SPY_ENV.is_file():
        return str(PY_SPY_ENV)
    try:
        return stack_dumps.py_spy()
    except stack_dumps.DumpFailed:
        return None


def main_thread_stack(program: str, pid: int) -> list[tuple[str, str]]:
    """``(function, file)`` of the main thread's frames in py-spy's dump, innermost first."""
    dump = subprocess.run(
        [program, "dump", "--pid", str(pid)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert dump.returncode == 0, dump.stderr
    return thread_stacks(dump.stdout)["MainThread"]


def thread_stacks(dump: str) -> dict[str, list[tuple[str, str]]]:
    """Each thread's frames (by thread name), from py-spy's text dump."""
    stacks: dict[str, list[tuple[str, str]]] = {}
    frames: list[tuple[str, str]] | None = None
    for line in dump.splitlines():
        if line.startswith("Thread "):
            frames = stacks.setdefault(line.rsplit('"', 2)[-2], [])
        elif frames is not None and (match := FRAME.match(line)):
            frames.append((match["qualname"].rsplit(".", 1)[-1], match["file"]))
    assert stacks, dump
    return stacks


@pytest.mark.timeout(30)
def test_a_trainer_alone_hangs_waiting_for_data(start: Start) -> None:
    master = start("master", None)
    wait_for_line(master, [master])
    lines = master.output().splitlines()
    assert lines[-1] == HANG_LINE
    assert lines.count(HANG_LINE) == 1
    assert f"step {HANG_AT} loss=" in lines[-2], lines

    assert_hung_quietly([master])
    program = py_spy()
    if program is not None:
        stack = main_thread_stack(program, master.process.pid)
        functions = [function for function, _ in stack]
        assert "wait_for_data" in functions, stack
        # Innermost: the standard library's blocking wait (Queue.get on a lock), nothing of ours.
        assert stack[0][1] in ("threading.py", "queue.py"), stack
    assert_sigterm_ends([master], {"master": -signal.SIGTERM})


@pytest.mark.timeout(30)
def test_with_a_parameter_server_every_trainer_hangs_in_pull(start: Start) -> None:
    names = ("master", "worker", "ps")
    cluster = {name: [f"127.0.0.1:{port}"] for name, port in zip(names, free_ports(3), strict=True)}

    def tf_config(name: str) -> dict[str, Any]:
        return {"cluster": cluster, "task": {"type": name, "index": 0}, "environment": "cloud"}

    replicas = [start(name, tf_config(name)) for name in names]
    master, worker, ps = replicas
    wait_for_line(ps, replicas)
    assert ps.output().splitlines()[-1] == HANG_LINE
    assert_hung_quietly(replicas)
    for replica in replicas:
        expected = 1 if replica is ps else 0
        assert replica.output().count("hanging at step") == expected, logs(replicas)
    if sys.platform == "linux":
        ps_port = int(cluster["ps"][0].rpartition(":")[2])
        for trainer in (master, worker):
            assert_waits_without_timeout(trainer, ps_port)

    program = py_spy()
    stacks = None
    if program is not None:
        stacks = {r.name: main_thread_stack(program, r.process.pid) for r in (master, worker)}
    assert_sigterm_ends(replicas, {"master": -signal.SIGTERM, "worker": -signal.SIGTERM, "ps": 0})

    if stacks is None:
        pytest.skip("py-spy is not installed: the trainers' stacks were not checked")
    for name, stack in stacks.items():
        # Waiting for the ps's answer: the socket receive of the RPC, under the trainer's pull.
        function, file = stack[0]
        assert function in ("readinto", "recv_into") and file == "socket.py", (name, stack)
        assert ("pull", "trainer/ps.py") in stack, (name, stack)
