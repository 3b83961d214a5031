"""A Vertex AI and Cloud Logging stand-in on 127.0.0.1, to drive the real TUI by hand or in tmux.

There is no Google Cloud project on the machines this is built on, so the Vertex profile is
exercised against this: the jobs API is ``VertexReplay`` (the hand-built fixtures, stateful:
cancel and create work) behind a real HTTP server, and ``entries:list`` makes up log lines the
way Vertex AI labels them (numeric job id, ``workerpoolN-i`` task names, ``service`` lines), a
line every 2 s per replica while a job runs, so the log pane has something live to follow::

    python -m tests.support.vertex_stub --port 8471
    # settings.yaml:  profiles: {stub: {kind: vertex, project: my-project,
    #   region: us-central1, endpoint: "http://127.0.0.1:8471",
    #   logging_endpoint: "http://127.0.0.1:8471", token: stub}}
    tui-app --profile stub
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.vertex_replay import HOST, PROJECT, VertexReplay
from tui_app.model.filters.filter_expr import And, Compare, Node, Not, Or, Text, parse_filter

LINE_SECONDS = 2
LINES_PER_REPLICA = 150
_ID = re.compile(r'resource\.labels\.job_id="(\d+)"')


def _ns(text: str) -> int:
    head, _, frac = text.rstrip("Z").partition(".")
    whole = datetime.fromisoformat(head).replace(tzinfo=UTC).timestamp()
    return int(whole) * 1_000_000_000 + int((frac + "000000000")[:9])


def _ts(ns: int) -> str:
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ns % 1_000_000_000:09d}Z"


def _field(entry: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = entry
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _holds(node: Node | None, entry: dict[str, Any]) -> bool:
    """Enough of Cloud Logging's filter language for LogStream's and gcloud's queries."""
    if node is None:
        return True
    if isinstance(node, And):
        return all(_holds(n, entry) for n in node.items)
    if isinstance(node, Or):
        return any(_holds(n, entry) for n in node.items)
    if isinstance(node, Not):
        return not _holds(node.item, entry)
    if isinstance(node, Text):
        return node.value.lower() in json.dumps(entry).lower()
    assert isinstance(node, Compare)
    have = _field(entry, node.path)
    if have is None:
        return node.op == "!="
    a: Any = have
    b: Any = node.value
    if node.path == ("timestamp",):
        a, b = _ns(str(have)), _ns(node.value)
    ops = {
        "=": a == b,
        ":": str(b).lower() in str(a).lower(),
        "!=": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }
    return bool(ops[node.op])


def _entries(replay: VertexReplay, job_id: str) -> list[dict[str, Any]]:
    job = replay.job(job_id)
    if job is None:
        return []
    spec = job.get("jobSpec") or job.get("trialJobSpec") or {}
    tasks = [
        f"workerpool{p}-{i}"
        for p, pool in enumerate(spec.get("workerPoolSpecs") or [])
        for i in range(int(pool.get("replicaCount") or 0))
    ]
    start = _ns(job.get("startTime") or job["createTime"])
    end = _ns(job["endTime"]) if job.get("endTime") else time.time_ns()
    step = LINE_SECONDS * 1_000_000_000
    last = end - end % step
    first = max(start, last - LINES_PER_REPLICA * step)
    out = [_entry(job_id, "service", start, "Job is running.", "INFO")]
    for ns in range(first - first % step + step, last + 1, step):
        k = (ns - start) // step
        for t, task in enumerate(tasks):
            text = f"step {k} loss {1.0 / (k + 1):.4f}" if t == 0 else f"{task} step {k} ok"
            out.append(_entry(job_id, task, ns + t * 1000, text, "INFO"))
    if job.get("error"):
        out.append(_entry(job_id, "service", end, str(job["error"].get("message")), "ERROR"))
    return out


def _entry(job_id: str, task: str, ns: int, text: str, severity: str) -> dict[str, Any]:
    return {
        "insertId": f"{ns:020d}{task}",
        "timestamp": _ts(ns),
        "severity": severity,
        "resource": {
            "type": "ml_job",
            "labels": {"job_id": job_id, "project_id": PROJECT, "task_name": task},
        },
        "jsonPayload": {"message": text},
    }


def serve(port: int) -> ThreadingHTTPServer:
    replay = VertexReplay()

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self) -> None:
            resp, content = replay.request(f"https://{HOST}{self.path}", "GET")
            self._send(int(resp.status), content)

        def do_POST(self) -> None:
            body = self._body()
            if self.path.split("?")[0] == "/v2/entries:list":
                self._send(200, json.dumps(_list_entries(replay, json.loads(body))).encode())
                return
            resp, content = replay.request(f"https://{HOST}{self.path}", "POST", body)
            self._send(int(resp.status), content)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    return server


def _list_entries(replay: VertexReplay, body: dict[str, Any]) -> dict[str, Any]:
    flt = str(body.get("filter") or "")
    found = _ID.search(flt)
    node = parse_filter(flt)
    entries = [e for e in _entries(replay, found[1]) if _holds(node, e)] if found else []
    entries.sort(
        key=lambda e: (_ns(e["timestamp"]), e["insertId"]),
        reverse="desc" in str(body.get("orderBy") or ""),
    )
    start = int(body.get("pageToken") or 0)
    size = int(body.get("pageSize") or 1000)
    out: dict[str, Any] = {"entries": entries[start : start + size]}
    if start + size < len(entries):
        out["nextPageToken"] = str(start + size)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8471)
    args = parser.parse_args()
    server = serve(args.port)
    print(f"Vertex AI stand-in on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
