"""Parameter servers and the client trainers use to talk to them (stdlib XML-RPC).

This is between-graph asynchronous data parallelism as the old TensorFlow parameter-server
setups did it: every ps holds a shard of the parameters (parameter ``i`` lives on ps
``i % num_ps``), trainers pull the current values, compute a gradient on their own data and push
it back, and the ps applies it at once, without waiting for other trainers. The global step is
ps 0's count of applied pushes, so it is shared by all replicas.
"""

from __future__ import annotations

import http.client
import math
import signal
import socketserver
import threading
import time
import xmlrpc.client
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, NoReturn
from xmlrpc.server import SimpleXMLRPCRequestHandler, SimpleXMLRPCServer

from trainer.cluster import CHIEF_TYPES, TaskInfo, split_address
from trainer.util import log

RPC_TIMEOUT_SECONDS = 10.0


def shard_indices(ps_index: int, num_ps: int, num_params: int) -> list[int]:
    """Which positions of the flat parameter vector ps ``ps_index`` owns (round robin)."""
    return list(range(ps_index, num_params, num_ps))


class ParameterShard:
    """One ps's slice of the parameters plus its push counter; safe to call from many threads."""

    def __init__(self, ps_index: int, num_ps: int, dim: int, log_every: int) -> None:
        self.ps_index = ps_index
        self.num_ps = num_ps
        self.dim = dim
        self.indices = shard_indices(ps_index, num_ps, dim + 1)
        self.values = [0.0] * len(self.indices)
        self.step = 0
        self.log_every = max(1, log_every)
        self._lock = threading.Lock()
        # push() only records that an injected failure is due; the main thread raises it, since
        # an exception in a request thread would merely become an XML-RPC fault for the caller.
        self.fail_at_step: int | None = None
        self.failure_due: int | None = None
        # --hang-at-step: from this global step on, pull never answers (see _hang).
        self.hang_at_step: int | None = None
        self.hang_callers = 1
        self._unanswered = 0
        self._never = threading.Event()

    def _hang(self, hang_at_step: int) -> NoReturn:
        """Never answer this call: its request thread waits on an event nobody sets.

        The trainer that made the call then waits in the socket receive of its RPC, as trainers
        of a wedged ps do. Once ``hang_callers`` calls (one per trainer in the cluster) are
        held, every trainer is past its last line of output: only then is the hang announced,
        so that nothing at all is printed after that line.
        """
        with self._lock:
            self._unanswered += 1
            announce = self._unanswered == self.hang_callers
        if announce:
            log(f"hanging at step {hang_at_step} (--hang-at-step)")
        while True:
            self._never.wait()

    def pull(self) -> list[float]:
        """This shard's values followed by the global step (as the last element).

        From ``hang_at_step`` on it never returns. Pushes are still applied, so a trainer that
        pulled just before can still push (the global step may pass ``hang_at_step`` by one push
        per such trainer); its next pull then waits with the others'.
        """
        with self._lock:
            hang_at = self.hang_at_step
            if hang_at is None or self.step < hang_at:
                return [*self.values, float(self.step)]
        self._hang(hang_at)

    def push(self, grads: list[float], lr: float) -> int:
        """Apply ``values -= lr * grads`` right away (asynchronous SGD); return the new step."""
        if len(grads) != len(self.values):
            raise ValueError(
                f"ps {self.ps_index} holds {len(self.values)} parameters but got {len(grads)} "
                "gradients (is --dim the same for every replica?)"
            )
        lr = float(lr)
        with self._lock:
            for i, grad in enumerate(grads):
                self.values[i] -= lr * float(grad)
            self.step += 1
            step = self.step
            norm = math.sqrt(sum(v * v for v in self.values))
        if step % self.log_every == 0:
            log(f"ps {self.ps_index}: global_step={step} shard_norm={norm:.6f}")
        due = self.fail_at_step is not None and step >= self.fail_at_step
        if due and self.failure_due is None:
            self.failure_due = step
        return step

    def get_step(self) -> int:
        """The number of pushes applied so far."""
        with self._lock:
            return self.step

    def assign(self, values: list[float], step: int) -> int:
        """Overwrite the shard and step (the chief restoring a checkpoint); return the step."""
        if len(values) != len(self.values):
            raise ValueError(
                f"ps {self.ps_index} holds {len(self.values)} parameters, "
                f"cannot assign {len(values)}"
            )
        with self._lock:
            self.values = [float(v) for v in values]
            self.step = int(step)
        log(f"ps {self.ps_index}: restored shard at global_step={int(step)}")
        return int(step)

    def shard_info(self) -> dict[str, Any]:
        """Layout facts a client checks once, so a --dim or cluster mismatch fails loudly."""
        return {"ps_index": self.ps_index, "num_ps": self.num_ps, "dim": self.dim}


class _RequestHandler(SimpleXMLRPCRequestHandler):
    """HTTP/1.1 keep-alive: a trainer reuses one connection instead of opening one per RPC."""

    protocol_version = "HTTP/1.1"


class ThreadedXMLRPCServer(socketserver.ThreadingMixIn, SimpleXMLRPCServer):
    """One thread per connection, so a slow trainer never blocks the others' pushes.

    Daemon threads and no join on close: a ps told to stop must not wait for idle keep-alive
    connections of trainers that are still around.
    """

    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], on_tick: Callable[[], None]) -> None:
        super().__init__(
            address, requestHandler=_RequestHandler, logRequests=False, allow_none=True
        )
        self._on_tick = on_tick

    def service_actions(self) -> None:
        """Called by ``serve_forever`` between polls, on the main thread."""
        self._on_tick()


class _Terminated(Exception):
    """Raised from the SIGTERM/SIGINT handler to leave ``serve_forever``."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(signal.Signals(signum).name)


def serve(
    task: TaskInfo,
    dim: int,
    log_every: int,
    fail_at_step: int | None,
    on_failure: Callable[[int], None],
    handle_sigterm: bool = True,
    hang_at_step: int | None = None,
) -> int:
    """Run this replica as a parameter server until SIGTERM/SIGINT; return the exit code.

    A ps never finishes on its own, as on the platform: the service stops it when the job ends
    (SIGTERM, then SIGKILL), so SIGTERM must mean a prompt, clean exit 0. ``on_failure`` is
    called on the main thread with the step once ``fail_at_step`` pushes have been applied.

    From global step ``hang_at_step`` on, ps 0 answers no ``pull`` (the global step is its own,
    and every trainer pulls from it first): all trainers end up waiting on it. The request
    threads it holds are daemons, so SIGTERM still ends the process at once.
    """
    host, port = task.own_address()
    shard = ParameterShard(task.index, len(task.ps_addresses), dim, log_every)
    shard.fail_at_step = fail_at_step
    if task.index == 0:
        shard.hang_at_step = hang_at_step
        callers = (*CHIEF_TYPES, "worker", "evaluator")
        shard.hang_callers = max(1, sum(len(task.cluster.get(role, [])) for role in callers))

    def on_tick() -> None:
        if shard.failure_due is not None:
            on_failure(shard.failure_due)

    if handle_sigterm:
        signal.signal(signal.SIGTERM, _raise_terminated)
    signal.signal(signal.SIGINT, _raise_terminated)
    server = ThreadedXMLRPCServer((host, port), on_tick)
    # Exposes the shard's public methods: pull, push, get_step, assign, shard_info.
    server.register_instance(shard)
    log(f"ps {task.index}: serving {len(shard.indices)} of {dim + 1} parameters on {host}:{port}")
    try:
        server.serve_forever(poll_interval=0.1)
    except _Terminated as exc:
        log(f"ps {task.index}: received {exc} at global_step={shard.step}, exiting")
    finally:
        server.server_close()
    return 0


class _TimeoutTransport(xmlrpc.client.Transport):
    """``ServerProxy`` has no timeout; without one a wedged ps would hang a trainer forever.

    A timeout of None waits for good (``--hang-at-step`` wants exactly that).
    """

    def __init__(self, timeout: float | None) -> None:
        super().__init__()
        self._timeout = timeout

    def make_connection(self, host: Any) -> http.client.HTTPConnection:
        connection = super().make_connection(host)
        connection.timeout = self._timeout
        return connection


class PSUnavailableError(RuntimeError):
    """A parameter server could not be reached within the connect timeout."""


class ParameterClient:
    """A trainer's view of all parameter servers: the full vector and the global step."""

    def __init__(
        self,
        addresses: Sequence[str],
        dim: int,
        connect_timeout: float,
        rpc_timeout: float | None = RPC_TIMEOUT_SECONDS,
    ) -> None:
        self.addresses = list(addresses)
        self.dim = dim
        self.connect_timeout = connect_timeout
        self._proxies: list[xmlrpc.client.ServerProxy] = []
        for address in self.addresses:
            host, port = split_address(address)
            self._proxies.append(
                xmlrpc.client.ServerProxy(
                    f"http://{host}:{port}/",
                    transport=_TimeoutTransport(rpc_timeout),
                    allow_none=True,
                )
            )
        self._layout = [shard_indices(j, len(addresses), dim + 1) for j in range(len(addresses))]

    def _call(self, ps_index: int, method: str, *args: Any) -> Any:
        """Call ``method`` on one ps, retrying with backoff while it is unreachable.

        A ps may start after the trainers (the service launches replicas concurrently) or be
        briefly busy; only after ``connect_timeout`` seconds without success do we give up.
        XML-RPC faults (the ps rejected the call) are not retried: they are bugs, not weather.
        """
        deadline = time.monotonic() + self.connect_timeout
        delay = 0.05
        last_report = 0.0
        while True:
            try:
                return getattr(self._proxies[ps_index], method)(*args)
            except (OSError, http.client.HTTPException, xmlrpc.client.ProtocolError) as exc:
                now = time.monotonic()
                address = self.addresses[ps_index]
                if now >= deadline:
                    raise PSUnavailableError(
                        f"could not reach parameter server ps:{ps_index} at {address} for "
                        f"{self.connect_timeout:.0f} s ({type(exc).__name__}: {exc})"
                    ) from exc
                if now - last_report >= 5.0:
                    log(f"waiting for ps:{ps_index} at {address} ({type(exc).__name__}), retrying")
                    last_report = now
                time.sleep(min(delay, max(0.0, deadline - now)))
                delay = min(delay * 2, 2.0)

    def wait_until_ready(self) -> int:
        """Block until every ps answers and agrees on the layout; return the global step."""
        for j in range(len(self._proxies)):
            info = self._call(j, "shard_info")
            expected = {"ps_index": j, "num_ps": len(self._proxies), "dim": self.dim}
            if info != expected:
                raise RuntimeError(
                    f"ps:{j} at {self.addresses[j]} has layout {info}, "
                    f"but this replica expects {expected}"
                )
        return self.get_step()

    def get_step(self) -> int:
        """The global step (ps 0's push count)."""
        return int(self._call(0, "get_step"))

    def pull(self) -> tuple[list[float], int]:
        """Gather the full parameter vector from all shards, plus the global step."""
        params = [0.0] * (self.dim + 1)
        step = 0
        for j, indices in enumerate(self._layout):
            reply = self._call(j, "pull")
            values, shard_step = reply[:-1], int(reply[-1])
            if len(values) != len(indices):
                raise RuntimeError(f"ps:{j} sent {len(values)} values, expected {len(indices)}")
            for position, value in zip(indices, values):
                params[position] = float(value)
            if j == 0:
                step = shard_step
        return params, step

    def push(self, grads: Sequence[float], lr: float) -> int:
        """Send each shard its slice of the gradient; return the new global step."""
        step = 0
        for j, indices in enumerate(self._layout):
            new_step = int(self._call(j, "push", [float(grads[i]) for i in indices], float(lr)))
            if j == 0:
                step = new_step
        return step

    def assign(self, params: Sequence[float], step: int) -> None:
        """Overwrite every shard (restoring a checkpoint)."""
        for j, indices in enumerate(self._layout):
            self._call(j, "assign", [float(params[i]) for i in indices], int(step))
