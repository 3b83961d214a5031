"""Records what a replica was given (argv, the cluster variables), and can act like a trainer.

Writes ``probe/<task type>-<index>[-trial<id>].json`` in its working dir (the replica's).
With torch.distributed's variables set and ``WORLD_SIZE`` > 1, the nodes first meet the way
``init_process_group``'s ``env://`` rendezvous does: rank 0 listens on
``MASTER_ADDR:MASTER_PORT``, every other rank connects and sends its rank, and rank 0 records
the ranks it met.

Flags: ``--deprecation`` prints TensorFlow-style multi-line deprecation records to stderr (Python
logging's and absl's), ``--stderr-file F --exit-code N`` copies a file to stderr and exits with N;
``--gs-https IN OUT`` reads ``gs://`` object IN and writes its bytes reversed to OUT the way
TensorFlow's GCS filesystem does: HTTPS to storage.googleapis.com / www.googleapis.com through
``ALL_PROXY``, trusting ``CURL_CA_BUNDLE``, with ``GOOGLE_AUTH_TOKEN_FOR_TESTING`` as the bearer;
anything else (tuning flags) is parsed with argparse into ``hyperparameters``.
"""

from __future__ import annotations

import argparse
import glob
import http.client
import json
import os
import socket
import ssl
import sys
import time
import urllib.parse

TORCH_VARS = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")
DEPRECATION = (
    "WARNING:tensorflow:From /usr/lib/python3/site-packages/tensorflow/python/training/"
    "training_util.py:396: Variable.initialized_value (from tensorflow.python.ops.variables) "
    "is deprecated and will be removed in a future version.\n"
    "Instructions for updating:\n"
    "Use Variable.read_value. Variables in 2.X are initialized automatically both in eager "
    "and graph (inside tf.defun) contexts.\n"
)
ABSL = (
    "W1122 08:30:00.123456 140233 deprecation.py:350] From /usr/lib/python3/site-packages/"
    "tensorflow/python/training/saver.py:1064: remove_checkpoint (from tensorflow.python."
    "training.checkpoint_management) is deprecated and will be removed in a future version.\n"
    "Instructions for updating:\n"
    "Use standard file APIs to delete files with this prefix.\n"
)


def _rendezvous(rank: int, world: int, addr: str, port: int) -> list[int]:
    deadline = time.monotonic() + 60
    if rank == 0:
        with socket.create_server((addr, port)) as server:
            server.settimeout(60)
            met = [0]
            for _ in range(world - 1):
                conn, _ = server.accept()
                with conn:
                    met.append(int(conn.recv(16).decode()))
                    conn.sendall(b"ok")
            return sorted(met)
    while True:
        try:
            with socket.create_connection((addr, port), timeout=5) as conn:
                conn.sendall(str(rank).encode())
                assert conn.recv(2) == b"ok"
                return [rank]
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # rank 0 is not listening yet


def _google(method: str, url: str, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request as TensorFlow's libcurl client sends it with the replica's environment:
    through ``ALL_PROXY``'s tunnel, trusting ``CURL_CA_BUNDLE``, and on a POST or PUT both
    ``Content-Length`` and ``Transfer-Encoding: identity``."""
    context = ssl.create_default_context(cafile=os.environ["CURL_CA_BUNDLE"])
    proxy = urllib.parse.urlsplit(os.environ["ALL_PROXY"])
    target = urllib.parse.urlsplit(url)
    conn = http.client.HTTPSConnection(
        proxy.hostname or "127.0.0.1", proxy.port, context=context, timeout=60
    )
    conn.set_tunnel(target.hostname or "", 443)
    path = target.path + (f"?{target.query}" if target.query else "")
    conn.putrequest(method, path)
    conn.putheader("Authorization", "Bearer " + os.environ["GOOGLE_AUTH_TOKEN_FOR_TESTING"])
    if body is not None:
        conn.putheader("Content-Length", str(len(body)))
        conn.putheader("Transfer-Encoding", "identity")
        conn.putheader("Content-Type", "application/x-www-form-urlencoded")
    conn.endheaders(body)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if response.status >= 400:
        raise RuntimeError(f"{method} {url}: {response.status} {data[:300]!r}")
    return response.status, dict(response.getheaders()), data


def _gs_https(source: str, dest: str) -> dict[str, object]:
    bucket, _, name = source[len("gs://") :].partition("/")
    quoted = urllib.parse.quote(name, safe="")
    _, _, data = _google("GET", f"https://storage.googleapis.com/{bucket}/{quoted}")
    out_bucket, _, out_name = dest[len("gs://") :].partition("/")
    start = (
        f"https://www.googleapis.com/upload/storage/v1/b/{out_bucket}/o"
        f"?uploadType=resumable&name={urllib.parse.quote(out_name, safe='')}"
    )
    _, headers, _ = _google("POST", start, b"")
    session = headers["Location"]
    status, _, _ = _google("PUT", session, data[::-1])
    return {"read": len(data), "session": session, "put_status": status}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job-dir")
    parser.add_argument("--deprecation", action="store_true")
    parser.add_argument("--stderr-file")
    parser.add_argument("--exit-code", type=int, default=0)
    parser.add_argument("--gs-https", nargs=2)
    # The chief ends the job: with this many other replicas, it waits (up to 60 s) until each
    # has written its record beside its own (a slow parameter server is otherwise stopped
    # by the job's end before it writes).
    parser.add_argument("--await-peers", type=int, default=0)
    args, rest = parser.parse_known_args()
    hp = argparse.ArgumentParser()
    for flag in rest:
        if flag.startswith("--") and "=" in flag:
            hp.add_argument(flag.split("=", 1)[0])
    hyperparameters = vars(hp.parse_args(rest))
    tf_config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = tf_config.get("task", {})
    record = {
        "argv": sys.argv[1:],
        "hyperparameters": hyperparameters,
        "env": {k: os.environ[k] for k in TORCH_VARS if k in os.environ},
        "tf_config": tf_config,
    }
    env = record["env"]
    if "RANK" in env and int(env["WORLD_SIZE"]) > 1:
        record["met"] = _rendezvous(
            int(env["RANK"]), int(env["WORLD_SIZE"]), env["MASTER_ADDR"], int(env["MASTER_PORT"])
        )
    if args.gs_https:
        record["gs_https"] = _gs_https(*args.gs_https)
    if args.deprecation:
        sys.stderr.write(DEPRECATION)
        sys.stderr.write(ABSL)
        sys.stderr.flush()
    name = f"{task.get('type', 'master')}-{task.get('index', 0)}"
    if "trial" in task:
        name += f"-trial{task['trial']}"
    out = "probe"
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, name + ".json.tmp"), "w") as fh:
        json.dump(record, fh)
    os.replace(os.path.join(out, name + ".json.tmp"), os.path.join(out, name + ".json"))
    if args.await_peers and task.get("type", "master") in ("master", "chief"):
        peers = os.path.join("..", "*", "probe", "*.json")
        deadline = time.monotonic() + 60
        while len(glob.glob(peers)) < args.await_peers + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    if args.stderr_file:
        with open(args.stderr_file) as fh:
            sys.stderr.write(fh.read())
    sys.exit(args.exit_code)


if __name__ == "__main__":
    main()
