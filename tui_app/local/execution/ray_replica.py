"""One replica on a Ray node: the detached, named actor that runs the replica's supervisor there.

The service (``ray_executor``) creates one of these per replica inside the job's placement group,
so Ray has already reserved the replica's CPUs, memory and GPUs on the node it picked. The actor
then does on its node what the local executor does on the service's machine: it starts the same
supervisor (``python -m tui_app.local.execution.supervisor``) on a spec whose paths are the
node's, and reports how the replica ended, what it uses and where it runs.

A node is not assumed to share a filesystem with the service:

- the job's installed packages arrive once per node through Ray's object store (a tarball, kept
  under the node's cache by content hash) and every path in the spec is rewritten to the copy;
- the replica's output (stdout, stderr, its hypertune reports, its end status) is shipped to the
  service over HTTP by a thread of this actor, each file by offset: the service appends only the
  bytes it has not got (``logs/replica_output``), so a retry after a lost answer, a restarted
  service or a restarted shipper neither loses nor doubles a line. The URL carries the replica's
  own credential, which the service revokes when the job ends.

Everything the actor keeps on its node lies under ``node_root()``, in folders only the service's
user may enter (0700): a replica's ``spec.json`` holds its credential (in ``STORAGE_EMULATOR_HOST``
and the token variables), readable by anyone who can read the file. A replica's folder is removed
when its output is with the service, and one a dead actor left behind is swept by the next actor
that starts on the node (``sweep_replicas`` says when a folder counts as left behind).

The actor is detached: it outlives the service that made it, and a restarted service finds it by
name (``ray.get_actor``) and asks it the same questions. The supervisor is told to stop its
replica when its parent (this actor's process) goes away, so a killed actor or node leaves no
training process running. Imported only where Ray is installed (the ``ray`` extra).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import logging
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import psutil

from tui_app.local.environments import packages
from tui_app.local.execution.local_executor import SUPERVISOR_MODULE
from tui_app.local.execution.ray_node_folders import (
    FILE_MODE,
    PRIVATE_MODE,
    node_folder,
    node_root,
)
from tui_app.local.execution.stack_dumps import DumpFailed, dump_tree
from tui_app.local.execution.supervisor import stop_signals_held
from tui_app.local.storage.storage_env import REPLICA_OUTPUT_FILES
from tui_app.local.untrusted_files import UntrustedFileError, read_beneath, size_beneath

log = logging.getLogger(__name__)

SHIP_EVERY_SECONDS = 0.1
CHUNK_BYTES = 1 << 20
NODE_LOCAL_ENV = "TUI_APP_RAY_NODE_LOCAL_ONLY"
"""Set (to 1) on a node: it uses none of the service's folders even where it sees them (a slow
shared filesystem; the tests' stand-in for a node on another machine)."""


def write_private(path: Path, data: bytes) -> None:
    """A new file ``path`` of ``data`` that only this user may read (0600), never through a
    link: what holds a replica's credential."""
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE
    )
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


STALE_SECONDS = 600.0
"""A replica folder without a supervisor's pid, untouched this long, is left behind (a start cut
short); a younger one may be a start under way."""


def sweep_replicas(root: Path, now: float | None = None) -> list[Path]:
    """Remove what replicas that are over left under ``root/replicas`` on this node; the task
    folders removed.

    A replica's folder is normally removed by its own actor once the service holds every byte
    of its output (``ReplicaActor.wait``). One stays behind when its actor died first: its node
    went down, or it was killed. Such a folder still holds the replica's credential and output,
    so the next actor that starts on the node (a replica's, or a warm one the pool fills) sweeps
    it. A task folder ``replicas/<run>/<task>`` is removed only when both hold:

    - no live actor owns it: an actor takes an exclusive ``flock`` on its folder when it makes
      it and holds it until its process ends, also after its replica ended while output is
      still to ship (a service that is down). The lock is free once the actor's process is
      gone, whatever killed it; a folder this sweep cannot lock is left alone;
    - its supervisor is not running: the pid in its ``pid.json`` is gone, or is no
      supervisor; without a ``pid.json`` (a start cut short before the supervisor wrote one),
      nothing in the folder changed for ``STALE_SECONDS``, since a start under way has made
      the folder but not yet the file. A supervisor outlives its actor for the grace period
      it gives its replica to stop; the folder waits for it.

    A run folder left empty is removed too. Folders an older version made hold no lock while
    their actor lives; the supervisor rule still keeps a running replica's, but not the output
    of one that ended while its actor still ships (a service down across the upgrade).
    """
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        runs = [e for e in os.scandir(root / "replicas") if e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed
    for run in runs:
        try:
            tasks = [e for e in os.scandir(run.path) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for task in tasks:
            folder = Path(task.path)
            if _remove_if_left(folder, now):
                removed.append(folder)
        with contextlib.suppress(OSError):  # only when empty: a replica may be starting there
            os.rmdir(run.path)
    return removed


def _remove_if_left(folder: Path, now: float) -> bool:
    """Remove ``folder`` when no actor owns it and its supervisor is over (``sweep_replicas``)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live actor holds it (or this filesystem has no locks: keep all)
            return False
        if _supervisor_may_run(folder, now):
            return False
        shutil.rmtree(folder, ignore_errors=True)  # never follows a link out of the folder
        return not folder.exists()
    finally:
        os.close(fd)


def _supervisor_may_run(folder: Path, now: float) -> bool:
    """Whether the supervisor of the replica in ``folder`` runs, or may be about to."""
    try:
        pid = int(json.loads(read_beneath(folder, "pid.json", 0, 4096))["supervisor"])
    except (OSError, ValueError, KeyError, TypeError):
        return _touched_since(folder, now - STALE_SECONDS)
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return SUPERVISOR_MODULE in proc.cmdline()
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:  # cannot tell: keep it
        return True


def _touched_since(folder: Path, since: float) -> bool:
    """Whether ``folder`` or anything directly in it changed after ``since``."""
    try:
        times = [os.lstat(folder).st_mtime]
        times += [e.stat(follow_symlinks=False).st_mtime for e in os.scandir(folder)]
    except OSError:
        return True
    return max(times) > since


class OutputShipper:
    """Sends the replica's output files to the service, each from the offset the service has.

    The files lie in the replica's work dir, which the replica writes: a container replica has
    its ``hypertune`` folder mounted read-write and may put a link to any file of the node
    there, or a FIFO that would block a reader forever. Each file is therefore opened beneath
    the work dir without following a link and only when it is a regular file
    (``untrusted_files``). A stream whose file is not one, or that the service refuses (403:
    its file there is not a regular file; 413: it reached its cap, ``REPLICA_OUTPUT_CAPS``),
    stops for good, the reason in ``last_error`` and ``stopped``; the other streams go on. A
    401 or 404 means the credential is revoked (the job ended): nothing more is shipped.

    ``base``: what the service already held of each stream when this replica started, from an
    earlier run of it (a replica started again on another node after its node died). This run's
    files start empty: their byte 0 is the service's byte ``base``, so the earlier run's lines
    are neither overwritten nor taken for this run's."""

    def __init__(self, workdir: Path, endpoint: str, base: Mapping[str, int] | None = None) -> None:
        self.workdir = workdir
        self.endpoint = endpoint.rstrip("/")
        self.base = {s: int((base or {}).get(s) or 0) for s in REPLICA_OUTPUT_FILES}
        self.sent: dict[str, int | None] = dict.fromkeys(REPLICA_OUTPUT_FILES)
        self.refused = False
        """The service no longer takes this replica's output (its credential was revoked)."""
        self.stopped: dict[str, str] = {}
        """Streams no longer shipped, with why: retrying them could never succeed."""
        self.last_error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="output-shipper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def finish(self, timeout: float = 120.0) -> bool:
        """Ship what the files hold now, then stop; False when the service could not be reached
        within ``timeout`` (the caller reports the loss)."""
        self._stop.set()
        self._thread.join()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ship_once(final=True):
                return True
            time.sleep(0.5)
        return False

    def _loop(self) -> None:
        pause = SHIP_EVERY_SECONDS
        while not self._stop.is_set():
            ok = self.ship_once(final=False)
            pause = SHIP_EVERY_SECONDS if ok else min(2.0, pause * 2)
            self._stop.wait(pause)

    def _give_up(self, stream: str, why: str) -> None:
        self.stopped[stream] = why
        self.last_error = f"{stream} is no longer shipped: {why}"

    def ship_once(self, final: bool) -> bool:
        """One pass over the files; True when everything they hold is with the service (or
        can never be: a stopped stream)."""
        if self.refused:
            return True
        for stream, name in REPLICA_OUTPUT_FILES.items():
            if stream in self.stopped or (stream == "status" and not final):
                continue
            try:
                base = self.base[stream]
                size = size_beneath(self.workdir, name)
                while size:
                    have = self.sent[stream]  # the service's offset
                    if have is None:
                        have = self.sent[stream] = self._ask(stream)
                    local = max(0, have - base)
                    if local >= size:
                        break
                    data = read_beneath(self.workdir, name, local, min(CHUNK_BYTES, size - local))
                    if not data:
                        break
                    self.sent[stream] = self._send(stream, base + local, data)
            except _Refused:
                self.refused = True
                return True
            except _StreamRefused as exc:
                self._give_up(stream, str(exc))
            except UntrustedFileError as exc:
                self._give_up(stream, exc.strerror or str(exc))
            except (OSError, ValueError) as exc:
                self.last_error = str(exc)
                return False
        return True

    def _request(self, method: str, stream: str, offset: int | None, data: bytes | None) -> int:
        url = f"{self.endpoint}/output/{stream}"
        if offset is not None:
            url += f"?offset={offset}"
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Content-Type", "application/octet-stream")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                answer = json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 404):
                raise _Refused from None
            body = exc.read()
            if exc.code == 409:  # the service has fewer bytes than we thought: resend from there
                return int(json.loads(body or b"{}").get("size", 0))
            if exc.code in (403, 413):
                raise _StreamRefused(f"the service answered {exc.code}: {_message(body)}") from None
            raise OSError(f"HTTP {exc.code}: {body[:200]!r}") from None
        return int(answer.get("size", 0))

    def _ask(self, stream: str) -> int:
        return self._request("GET", stream, None, None)

    def _send(self, stream: str, offset: int, data: bytes) -> int:
        return self._request("POST", stream, offset, data)


def _message(body: bytes) -> str:
    """The service's error message in an answer's body (google.rpc), else its first bytes."""
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return repr(body[:200])


class _Refused(Exception):
    """The credential is no longer accepted: nothing more of this replica is shipped."""


class _StreamRefused(Exception):
    """The service takes no more of one stream (403, 413); the others go on."""


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def unpack_layer(root: Path, digest: str, data: bytes) -> Path:
    """The job's installed packages on this node, unpacked once per content (``digest``), in
    the node's private ``layers`` folder."""
    layers = node_folder(root, "layers")
    target = layers / digest
    if target.is_dir():
        return target
    tmp = layers / f".{digest}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(PRIVATE_MODE)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(tmp, filter="data")  # refuses absolute paths, links out and devices
    os.chmod(tmp, PRIVATE_MODE)  # the archive's "." entry brought the service's folder mode
    try:
        os.rename(tmp, target)
    except OSError:  # another replica of this node unpacked it first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def pack_layer(folder: Path) -> tuple[str, bytes]:
    """A folder as (sha256, gzipped tar) for ``unpack_layer`` on a node."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        tar.add(folder, arcname=".")
    data = buf.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def folder_probe(folder: Path) -> str:
    """What a node compares to tell whether it sees the service's copy of a folder (one machine,
    or a shared filesystem): its top-level names. Package folders are named by content hash, so
    the same path with the same names is the same install."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ""
    return hashlib.sha256("\0".join(names).encode()).hexdigest()


def rewrite_paths(value: Any, old: str, new: str) -> Any:
    """``value`` (a spec: strings, lists, dicts) with the folder ``old`` replaced by ``new``."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [rewrite_paths(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: rewrite_paths(v, old, new) for k, v in value.items()}
    return value


class ReplicaActor:
    """Runs one replica's supervisor on the node Ray placed it on (methods may run at once:
    ``wait`` blocks in one thread while ``usage`` and ``stop`` answer in others)."""

    def __init__(self, run_key: str | None, task_name: str | None) -> None:
        """``run_key`` and ``task_name`` None: a warm actor (``ray_warm_actors``) waiting on
        its node for ``assign``."""
        import ray

        self.address = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        self.node_id = ray.get_runtime_context().get_node_id()
        self.root = node_root()
        self.run_key: str | None = None
        self._parts: tuple[str, ...] = ("replicas", "unassigned")
        self.workdir = self.root.joinpath(*self._parts)
        if run_key is not None and task_name is not None:
            self.assign(run_key, task_name)
        self.proc: subprocess.Popen[bytes] | None = None
        self.shipper: OutputShipper | None = None
        self._held: list[socket.socket] = []
        self._ended: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._owner: int | None = None
        """The replica folder's descriptor, ``flock``ed while this process lives: the sweep of
        another actor (``sweep_replicas``) leaves the folder alone while it is held."""
        # Off the actor's start: an actor is waited for as soon as it answers ``where``.
        threading.Thread(target=self._sweep, name="replica-sweep", daemon=True).start()

    def _sweep(self) -> None:
        """What replicas of dead actors left on this node goes (``sweep_replicas``)."""
        try:
            removed = sweep_replicas(self.root)
        except Exception as exc:  # a sweep never fails the actor: the next one tries again
            log.warning("sweeping %s failed: %s", self.root / "replicas", exc)
            return
        if removed:
            log.info("removed %d replica folder(s) left by ended actors", len(removed))

    def assign(self, run_key: str, task_name: str) -> None:
        """Make this actor the one of replica ``task_name`` of run ``run_key`` (project/job or
        project/job/trial), once."""
        if self.run_key is not None and self.run_key != run_key:
            raise RuntimeError(f"this actor already runs a replica of {self.run_key}")
        self.run_key = run_key
        safe = hashlib.sha256(run_key.encode()).hexdigest()[:16]
        self._parts = ("replicas", safe, task_name)
        self.workdir = self.root.joinpath(*self._parts)

    def assignment(self) -> dict[str, Any]:
        """Which run this actor serves (None: a warm one still waiting) and on which node."""
        return {"runKey": self.run_key, "nodeId": self.node_id}

    def where(self) -> dict[str, Any]:
        """The node this replica runs on: its address and Ray's id for it."""
        return {"address": self.address, "nodeId": self.node_id, "pid": os.getpid()}

    def sees(self, path: str, probe: str) -> bool:
        """Whether this node sees the service's folder ``path`` as it is (``folder_probe``):
        then it is used in place rather than shipped."""
        if os.environ.get(NODE_LOCAL_ENV, "") not in ("", "0"):
            return False
        return bool(probe) and folder_probe(Path(path)) == probe

    def build_env(self, request: dict[str, Any]) -> Iterator[dict[str, str]]:
        """Build the job's runtime environment and layer on this node (``ray_node_env``),
        streaming ``{"line": ...}`` as pip writes, then ``{"layer": path}`` or ``{"error":
        why}``. ``request``: the runtime's ``manifest``, the ``layer`` name, the ``inputs``
        (digest, ObjectRef of their tarball) and the service's ``pip`` settings."""
        import ray

        from tui_app.local.execution import ray_node_env

        lines: queue.Queue[dict[str, str] | None] = queue.Queue()

        def work() -> None:
            try:
                digest, ref = request["inputs"]
                folder = unpack_layer(self.root, digest, ray.get(ref))
                layer = ray_node_env.build(
                    self.root,
                    request["manifest"],
                    request["layer"],
                    packages.input_files(folder),
                    request["pip"],
                    lambda line: lines.put({"line": line}),
                )
                lines.put({"layer": str(layer)})
            except Exception as exc:  # every failure goes back to the job's log, in words
                lines.put({"error": str(exc) or type(exc).__name__})
            finally:
                lines.put(None)

        threading.Thread(target=work, name="node-env-build", daemon=True).start()
        while (item := lines.get()) is not None:
            yield item

    def reserve_ports(self, count: int) -> list[int]:
        """Free ports on this node's address, held until ``start`` (the replica binds them)."""
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((self.address, 0))
            self._held.append(s)
        return [s.getsockname()[1] for s in self._held[-count:]]

    def start(
        self,
        spec: dict[str, Any],
        service_dir: str,
        endpoint: str,
        layer: tuple[str, str, Any] | None,
    ) -> tuple[int, list[str]]:
        """Start the supervisor on ``spec`` (written for the service's folder ``service_dir``);
        ``layer`` is (service path, digest, ObjectRef of its tarball) when the job installed
        packages. Returns the supervisor's pid and the GPU ids Ray gave this actor."""
        import ray

        with self._lock:
            gpus = [str(g) for g in ray.get_gpu_ids()]
            if self.proc is not None:
                return self.proc.pid, gpus
            if self.run_key is None:
                raise RuntimeError("this actor was never assigned a replica")
            self._release_folder()
            shutil.rmtree(self.workdir, ignore_errors=True)
            node_folder(self.root, *self._parts)
            self._own_folder()
            node_folder(self.root, *self._parts, "hypertune")
            spec = rewrite_paths(spec, service_dir, str(self.workdir))
            if layer is not None:
                old, digest, ref = layer
                data = ray.get(ref)
                spec = rewrite_paths(spec, old, str(unpack_layer(self.root, digest, data)))
            if spec["argv"] and spec["argv"][0] == spec.get("service_python"):
                spec["argv"][0] = sys.executable  # the service's own Python: this node's
            if gpus:
                spec["env"]["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
            spec["parent_pid"] = os.getpid()
            spec_path = self.workdir / "spec.json"
            write_private(spec_path, json.dumps(spec).encode())  # the replica's credential
            for s in self._held:
                s.close()
            self._held.clear()
            log_fd = os.open(
                self.workdir / "supervisor.log",
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                FILE_MODE,
            )
            with open(log_fd, "ab") as sup_log, stop_signals_held():
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", SUPERVISOR_MODULE, str(spec_path)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=sup_log,
                    start_new_session=True,
                )
            self.shipper = OutputShipper(self.workdir, endpoint, spec.get("output_base"))
            self.shipper.start()
            return self.proc.pid, gpus

    def wait(self) -> dict[str, Any]:
        """Block until the replica has ended and its output is with the service; its status
        (as the supervisor wrote it), plus ``shipped``: False when the service was unreachable."""
        proc = self.proc
        if proc is None:
            return {"exit_code": 127, "error": "The replica was never started on its node."}
        proc.wait()
        with self._lock:
            if self._ended is None:
                shipped = self.shipper.finish() if self.shipper is not None else True
                try:
                    status = dict(json.loads(read_beneath(self.workdir, "status.json", 0, 1 << 16)))
                except (OSError, ValueError, TypeError):
                    status = {"exit_code": proc.returncode or 1, "error": "no status written"}
                status["shipped"] = shipped
                if self.shipper is not None and self.shipper.stopped:
                    status["unshipped"] = dict(self.shipper.stopped)
                self._ended = status
                if shipped:  # the service holds every byte: the node's copy is spent
                    self._remove_folder()
            return self._ended

    def _own_folder(self) -> None:
        """Hold the replica folder's lock for as long as this process lives (``_owner``)."""
        fd = os.open(self.workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        # Blocks only while a sweep looks at the folder, which it finds fresh and keeps. A
        # filesystem without locks fails here and in every sweep, which then keeps it too.
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        self._owner = fd

    def _release_folder(self) -> None:
        if self._owner is not None:
            os.close(self._owner)
            self._owner = None

    def _remove_folder(self) -> None:
        """The replica's folder, and its run's when no other replica of the run is on this
        node: nothing of a run that ended stays behind."""
        shutil.rmtree(self.workdir, ignore_errors=True)
        self._release_folder()
        with contextlib.suppress(OSError):  # only when empty
            os.rmdir(self.workdir.parent)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def usage(self) -> tuple[float, int] | None:
        """CPU seconds used so far and resident memory of the replica's whole tree (the
        supervisor and everything under it), None once it has ended."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        used, rss = 0.0, 0
        for p in _tree(self.proc.pid):
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                used += t.user + t.system + t.children_user + t.children_system
                rss += p.memory_info().rss
        return used, rss

    def stacks(self, with_locals: bool) -> tuple[int, list[Any]] | str:
        """The replica's Python stacks, taken here on its node (``stack_dumps``): (pid, py-spy's
        threads), or why they cannot be taken."""
        if self.proc is None or self.proc.poll() is not None:
            return "it ended meanwhile"
        try:
            got = dump_tree(self.proc.pid, skip_root=True, with_locals=with_locals)
        except DumpFailed as exc:
            return str(exc)
        return got.pid, got.threads

    def stop(self) -> None:
        """Ask the supervisor to stop the replica (SIGTERM, then SIGKILL after its grace)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)

    def kill_tree(self) -> int:
        """Last resort: SIGKILL the supervisor and everything under it; how many were killed."""
        if self.proc is None:
            return 0
        procs = _tree(self.proc.pid)
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()
        return len(procs)
