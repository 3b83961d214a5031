"""py-spy dumps as the service takes them (tui_app/local/execution/stack_dumps.py), on real
processes: which process of a replica's tree is read, and each failure in the user's words."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tui_app.local.execution.stack_dumps import DumpFailed, dump, dump_tree
from tui_app.model.stacks import parse_dump

WAITER = textwrap.dedent(
    """
    import sys, threading
    def wait_for_the_queue():
        threading.Event().wait()
    print("ready", flush=True)
    wait_for_the_queue()
    """
)


def _ready(proc: subprocess.Popen[str]) -> subprocess.Popen[str]:
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.fixture
def waiter() -> Iterator[subprocess.Popen[str]]:
    """A Python process blocked in a function of its own."""
    proc = subprocess.Popen([sys.executable, "-c", WAITER], stdout=subprocess.PIPE, text=True)
    try:
        yield _ready(proc)
    finally:
        proc.kill()
        proc.wait()


def test_a_python_process_is_read_with_its_own_function(waiter: subprocess.Popen[str]) -> None:
    got = dump_tree(waiter.pid, skip_root=False)
    assert got.pid == waiter.pid
    threads = parse_dump(got.threads)
    names = [f.name for t in threads for f in t.frames]
    assert "wait_for_the_queue" in names, names
    assert not any(t.active for t in threads)  # blocked: idle


def test_under_a_supervisor_the_first_python_child_is_read() -> None:
    """A replica's root (its supervisor) is skipped; a shell between them is walked through."""
    script = f"{shlex.quote(sys.executable)} -c {shlex.quote(WAITER)}"
    proc = subprocess.Popen(["/bin/sh", "-c", f"{script}; true"], stdout=subprocess.PIPE, text=True)
    try:
        _ready(proc)
        got = dump_tree(proc.pid, skip_root=True)
        assert got.pid != proc.pid
        assert psutil.Process(got.pid).ppid() == proc.pid
    finally:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
        proc.wait()


def test_a_tree_without_python_says_what_it_runs() -> None:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(DumpFailed) as err:
            dump_tree(proc.pid, skip_root=False)
        assert str(err.value) == f"it is not a Python process ({shutil.which('sleep')})"
    finally:
        proc.kill()
        proc.wait()


def test_a_process_that_ended_meanwhile_says_so() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    for call in (lambda: dump_tree(proc.pid, skip_root=False), lambda: dump(proc.pid)):
        with pytest.raises(DumpFailed, match=r"^it ended meanwhile$"):
            call()


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_ptrace_refused_names_the_settings(waiter: subprocess.Popen[str]) -> None:
    """Run as nobody against root's process: the kernel refuses ptrace, and the message says
    what py-spy needs."""
    code = textwrap.dedent(
        f"""
        from tui_app.local.execution.stack_dumps import DumpFailed, dump
        try:
            dump({waiter.pid})
        except DumpFailed as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.startswith("ptrace is not permitted here: py-spy needs root, or "), done
    assert "CAP_SYS_PTRACE" in done.stdout and "kernel.yama.ptrace_scope" in done.stdout


def test_py_spy_missing_from_the_installation_says_how_to_install_it() -> None:
    """An interpreter with no py-spy beside it and none on PATH."""
    code = textwrap.dedent(
        """
        import sys
        sys.executable = "/nonexistent/bin/python3"
        from tui_app.local.execution.stack_dumps import DumpFailed, py_spy
        try:
            py_spy()
        except DumpFailed as exc:
            print(exc)
        """
    )
    env = {**os.environ, "PATH": "/nonexistent"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.stdout.strip() == (
        "py-spy is missing from this installation of tui-app (it is one of its dependencies: "
        "/nonexistent/bin/pip install py-spy)"
    ), (done, time.monotonic() - started)


def _pythons() -> list[str]:
    """The oldest and newest interpreters this machine has beside the service's own."""
    found = sorted(Path("/root/.pyenv/versions").glob("3.*/bin/python3"))
    wanted = [p for p in found if p.parent.parent.name.startswith(("3.7.", "3.13."))]
    return [str(p) for p in wanted]


@pytest.mark.parametrize("python", _pythons() or [pytest.param("", marks=pytest.mark.skip)])
def test_replicas_on_other_runtimes_are_read_too(python: str) -> None:
    """A runtime environment's interpreter (Python 3.7 for runtimeVersion 1.15 ... 3.13)."""
    proc = subprocess.Popen([python, "-c", WAITER], stdout=subprocess.PIPE, text=True)
    try:
        _ready(proc)
        threads = parse_dump(dump_tree(proc.pid, skip_root=False).threads)
        assert "wait_for_the_queue" in [f.name for t in threads for f in t.frames]
    finally:
        proc.kill()
        proc.wait()
