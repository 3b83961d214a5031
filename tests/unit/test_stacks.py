"""A job's Python stacks: py-spy's JSON read as hostile input, the service's ``:stacks`` answer
both ways, replicas with the same stacks folded, their one-line summaries and the text listing."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tui_app.model.stacks import (
    MAX_FRAMES,
    MAX_LOCALS,
    MAX_REPLICAS,
    MAX_TEXT,
    MAX_THREADS,
    Frame,
    JobStacks,
    LineKind,
    Local,
    Origin,
    ReplicaStacks,
    StackFormatError,
    ThreadStack,
    clean_text,
    fold,
    frame_origin,
    group_label,
    group_lines,
    main_thread,
    parse_dump,
    render_text,
    replica_label,
    signature,
    where,
)
from tui_app.model.stacks.folding import LINE_WIDTH

# What `py-spy dump --json --locals --pid PID` printed (py-spy 0.4, CPython 3.11) for a small
# program with a named helper thread, its main thread blocked in a socket read; paths shortened.
REAL_DUMP: list[dict[str, Any]] = [
    {
        "pid": 11278,
        "thread_id": 139698623547072,
        "thread_name": "loader",
        "os_thread_id": 11321,
        "active": False,
        "owns_gil": False,
        "frames": [
            {
                "name": "worker",
                "filename": "/tmp/stk/prog.py",
                "module": None,
                "short_filename": "prog.py",
                "line": 4,
                "locals": [
                    {"name": "n", "addr": 139698638219464, "arg": True, "repr": "2"},
                    {"name": "label", "addr": 139698637497664, "arg": True, "repr": '"w"'},
                    {"name": "data", "addr": 139698624626176, "arg": False, "repr": '{"a": 1}'},
                ],
                "is_entry": True,
                "is_shim_entry": False,
            },
            {
                "name": "Thread.run",
                "filename": "/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py",
                "module": None,
                "short_filename": "threading.py",
                "line": 982,
                "locals": [
                    {
                        "name": "self",
                        "addr": 139698624454608,
                        "arg": True,
                        "repr": "<Thread at 0x7f0e1ee2dfd0>",
                    }
                ],
                "is_entry": False,
                "is_shim_entry": False,
            },
        ],
        "process_info": None,
    },
    {
        "pid": 11278,
        "thread_id": 139698638699392,
        "thread_name": "MainThread",
        "os_thread_id": 11278,
        "active": False,
        "owns_gil": False,
        "frames": [
            {
                "name": "main",
                "filename": "/tmp/stk/prog.py",
                "module": None,
                "short_filename": "prog.py",
                "line": 9,
                "locals": [
                    {"name": "steps", "addr": 139698638219496, "arg": True, "repr": "3"},
                    {
                        "name": "buf",
                        "addr": 139698624455728,
                        "arg": False,
                        "repr": "<bytearray at 0x7f0e1ee2e430>",
                    },
                ],
                "is_entry": False,
                "is_shim_entry": False,
            },
            {
                "name": "<module>",
                "filename": "/tmp/stk/prog.py",
                "module": None,
                "short_filename": "prog.py",
                "line": 10,
                "locals": [],
                "is_entry": True,
                "is_shim_entry": True,
            },
        ],
        "process_info": None,
    },
]

SOCKET = "/usr/lib/python3.11/socket.py"
GRPC = "/opt/venv/lib/python3.11/site-packages/grpc/_channel.py"
TASK = "/app/trainer/task.py"


def spy_frame(
    name: str,
    filename: str,
    line: int,
    short: str | None = None,
    local_vars: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A frame as py-spy writes it."""
    return {
        "name": name,
        "filename": filename,
        "module": None,
        "short_filename": short if short is not None else filename.rsplit("/", 1)[-1],
        "line": line,
        "locals": local_vars,
        "is_entry": False,
        "is_shim_entry": False,
    }


def spy_thread(
    frames: list[dict[str, Any]],
    *,
    thread_id: int = 140406354819968,
    name: str | None = "MainThread",
    active: bool = False,
    owns_gil: bool = False,
) -> dict[str, Any]:
    """A thread as py-spy writes it."""
    return {
        "pid": 8826,
        "thread_id": thread_id,
        "thread_name": name,
        "os_thread_id": 8826,
        "active": active,
        "owns_gil": owns_gil,
        "frames": frames,
        "process_info": None,
    }


def trainer_frames(pull_line: int = 210) -> list[dict[str, Any]]:
    """A trainer's main thread waiting for a parameter server: its own ``pull`` calls gRPC,
    which waits in the standard library's socket read (innermost first)."""
    return [
        spy_frame("recv_into", SOCKET, 705),
        spy_frame("_Rendezvous._next", GRPC, 120, "grpc/_channel.py"),
        spy_frame("pull", TASK, pull_line, "trainer/task.py"),
        spy_frame("train", TASK, 300, "trainer/task.py"),
    ]


def loader_frames() -> list[dict[str, Any]]:
    """A data loader thread sleeping in the standard library."""
    return [
        spy_frame("Condition.wait", "/usr/lib/python3.11/threading.py", 327),
        spy_frame("Thread.run", "/usr/lib/python3.11/threading.py", 982),
    ]


def replica(
    task_name: str,
    frames: list[dict[str, Any]] | None = None,
    *,
    thread_id: int = 140406354819968,
    pid: int | None = 1234,
    trial_id: str | None = None,
    active: bool = False,
    loader: bool = True,
) -> ReplicaStacks:
    """A replica whose dump has a main thread (the trainer's by default) and a loader."""
    threads = [
        spy_thread(
            frames if frames is not None else trainer_frames(), thread_id=thread_id, active=active
        )
    ]
    if loader:
        threads.append(spy_thread(loader_frames(), thread_id=thread_id + 1, name="loader"))
    return ReplicaStacks(task_name, trial_id, pid, parse_dump(threads), None, None)


def failed(task_name: str, error: str, *, trial_id: str | None = None) -> ReplicaStacks:
    return ReplicaStacks(task_name, trial_id, None, (), error, None)


# --- py-spy's JSON ---------------------------------------------------------------------------


def test_a_real_dump_reads_into_threads_frames_and_locals() -> None:
    threads = parse_dump(REAL_DUMP)

    assert [t.thread_id for t in threads] == [139698623547072, 139698638699392]
    loader, main = threads
    assert loader.name == "loader"
    assert (main.name, main.active, main.owns_gil) == ("MainThread", False, False)
    assert main.frames[0] == Frame(
        "main",
        "/tmp/stk/prog.py",
        "prog.py",
        9,
        (Local("steps", "3", True), Local("buf", "<bytearray at 0x7f0e1ee2e430>", False)),
    )
    assert main.frames[1].locals == ()
    assert [f.name for f in loader.frames] == ["worker", "Thread.run"]
    assert loader.frames[0].locals == (
        Local("n", "2", True),
        Local("label", '"w"', True),
        Local("data", '{"a": 1}', False),
    )


def test_a_dump_without_locals_has_none_and_keeps_the_innermost_frame_first() -> None:
    (thread,) = parse_dump([spy_thread(trainer_frames(), active=True, owns_gil=True)])

    assert thread.active and thread.owns_gil
    assert [f.name for f in thread.frames] == ["recv_into", "_Rendezvous._next", "pull", "train"]
    assert all(f.locals is None for f in thread.frames)
    assert thread.frames[2].short_filename == "trainer/task.py"
    assert thread.frames[2].filename == TASK


def test_optional_fields_read_as_unknown_not_as_errors() -> None:
    raw = spy_thread([spy_frame("f", "/app/a.py", 1)], name=None)
    del raw["owns_gil"]  # an older py-spy
    raw["frames"][0]["short_filename"] = None
    raw["frames"][0]["locals"] = [{"name": "x", "addr": 1, "arg": True, "repr": None}]
    del raw["frames"][0]["locals"][0]["addr"]

    (thread,) = parse_dump([raw])

    assert thread.name is None
    assert thread.owns_gil is False
    assert thread.frames[0].short_filename == "/app/a.py"
    assert thread.frames[0].locals == (Local("x", None, True),)


def test_an_empty_dump_has_no_threads() -> None:
    assert parse_dump([]) == ()


def _set(path: tuple[Any, ...], value: Any) -> list[dict[str, Any]]:
    """The real dump with one value changed (or removed, for ``...``)."""
    dump = copy.deepcopy(REAL_DUMP)
    target: Any = dump
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return dump


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"threads": []}, "a py-spy dump must be an array, not an object"),
        (None, "a py-spy dump must be an array, not null"),
        ("[]", "a py-spy dump must be an array, not a string"),
        ([[1]], "thread 0 must be an object, not an array"),
        (_set((1, "thread_id"), ...), "thread 1: 'thread_id' must be an integer, not null"),
        (_set((1, "thread_id"), "12"), "thread 1: 'thread_id' must be an integer, not a string"),
        (_set((1, "thread_id"), True), "thread 1: 'thread_id' must be an integer, not a boolean"),
        (_set((1, "thread_id"), -1), "thread 1: 'thread_id' is out of range (-1)"),
        (_set((1, "thread_id"), 2**64), f"thread 1: 'thread_id' is out of range ({2**64})"),
        (_set((0, "thread_name"), 7), "thread 0: 'thread_name' must be a string or null"),
        (_set((0, "active"), ...), "thread 0: 'active' must be a boolean, not null"),
        (_set((0, "active"), 1), "thread 0: 'active' must be a boolean, not a number"),
        (_set((0, "owns_gil"), "yes"), "thread 0: 'owns_gil' must be a boolean, not a string"),
        (_set((0, "frames"), ...), "thread 0: 'frames' must be an array, not null"),
        (_set((0, "frames"), {}), "thread 0: 'frames' must be an array, not an object"),
        (_set((0, "frames", 1), "x"), "thread 0 frame 1 must be an object, not a string"),
        (_set((1, "frames", 0, "name"), ...), "thread 1 frame 0: 'name' must be a string"),
        (_set((1, "frames", 0, "filename"), 3), "thread 1 frame 0: 'filename' must be a string"),
        (
            _set((1, "frames", 0, "short_filename"), []),
            "thread 1 frame 0: 'short_filename' must be a string or null, not an array",
        ),
        (_set((1, "frames", 0, "line"), "9"), "thread 1 frame 0: 'line' must be an integer"),
        (_set((1, "frames", 0, "line"), 9.5), "thread 1 frame 0: 'line' must be an integer"),
        (_set((1, "frames", 0, "line"), None), "thread 1 frame 0: 'line' must be an integer"),
        (_set((1, "frames", 0, "line"), 2**40), "thread 1 frame 0: 'line' is out of range"),
        (_set((1, "frames", 0, "locals"), {}), "thread 1 frame 0: 'locals' must be an array"),
        (_set((1, "frames", 0, "locals", 1), 5), "thread 1 frame 0 local 1 must be an object"),
        (
            _set((1, "frames", 0, "locals", 0, "name"), None),
            "thread 1 frame 0 local 0: 'name' must be a string, not null",
        ),
        (
            _set((1, "frames", 0, "locals", 0, "repr"), 3),
            "thread 1 frame 0 local 0: 'repr' must be a string or null, not a number",
        ),
        (
            _set((1, "frames", 0, "locals", 0, "arg"), "true"),
            "thread 1 frame 0 local 0: 'arg' must be a boolean, not a string",
        ),
    ],
)
def test_a_malformed_dump_says_where_and_what(raw: object, message: str) -> None:
    with pytest.raises(StackFormatError) as caught:
        parse_dump(raw)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_dump_is_bounded_in_threads_frames_and_locals() -> None:
    many_locals = [{"name": f"v{i}", "arg": False, "repr": str(i)} for i in range(MAX_LOCALS + 10)]
    frames = [spy_frame(f"f{i}", TASK, i + 1) for i in range(MAX_FRAMES + 50)]
    frames[0]["locals"] = many_locals
    frames[MAX_FRAMES + 1] = "past the bound: never read"  # type: ignore[call-overload]
    small = [spy_frame("sleep", TASK, 1)]
    threads: list[Any] = [spy_thread(frames, thread_id=0)]
    threads += [spy_thread(small, thread_id=i) for i in range(1, MAX_THREADS)]
    threads.append("past the bound: never read")

    parsed = parse_dump(threads)

    assert len(parsed) == MAX_THREADS
    assert len(parsed[0].frames) == MAX_FRAMES
    assert parsed[0].frames[0].name == "f0"  # the innermost are kept
    assert parsed[0].frames[-1].name == f"f{MAX_FRAMES - 1}"
    locals_kept = parsed[0].frames[0].locals
    assert locals_kept is not None and len(locals_kept) == MAX_LOCALS
    assert locals_kept[-1].name == f"v{MAX_LOCALS - 1}"


def test_long_strings_are_cut_and_marked() -> None:
    long_repr = "x" * 100_000
    raw = spy_thread(
        [
            spy_frame(
                "f" * 600,
                "/a/" + "d" * 900,
                1,
                local_vars=[{"name": "big", "arg": False, "repr": long_repr}],
            )
        ]
    )

    (thread,) = parse_dump([raw])

    frame = thread.frames[0]
    assert len(frame.name) == MAX_TEXT and frame.name.endswith("…")
    assert len(frame.filename) == MAX_TEXT
    assert frame.locals is not None
    local_repr = frame.locals[0].repr
    assert local_repr is not None and len(local_repr) == MAX_TEXT
    assert local_repr == "x" * (MAX_TEXT - 1) + "…"


def test_strings_from_the_replica_cannot_drive_the_terminal() -> None:
    raw = spy_thread(
        [
            spy_frame(
                "evil\x1b[2J\x07",
                "/app/x.py",
                1,
                local_vars=[{"name": "s", "arg": False, "repr": "'a\nb\r\t' \u202eabc \ud800"}],
            )
        ],
        name="T\x00",
    )

    (thread,) = parse_dump([raw])

    assert thread.name == "T\\x00"
    assert thread.frames[0].name == "evil\\x1b[2J\\x07"
    assert thread.frames[0].locals == (Local("s", "'a\\nb\\r\\t' \\u202eabc \\ud800", False),)
    assert all(c.isprintable() for c in thread.frames[0].name)


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("plain", "plain"),
        ("ünïcode → 日本", "ünïcode → 日本"),
        ("a\x1bb", "a\\x1bb"),
        ("\x9b31m", "\\x9b31m"),
        ("line\u2028sep", "line\\u2028sep"),
        ("no\u00a0break", "no\u00a0break"),
        ("", ""),
    ],
)
def test_clean_text_escapes_what_a_terminal_acts_on(text: str, cleaned: str) -> None:
    assert clean_text(text) == cleaned


def test_clean_text_is_idempotent_and_bounded() -> None:
    for text in ["x" * (MAX_TEXT - 1), "x" * MAX_TEXT, "x" * (MAX_TEXT + 1), "\x1b" * MAX_TEXT]:
        once = clean_text(text)
        assert len(once) <= MAX_TEXT
        assert clean_text(once) == once
    assert clean_text("x" * MAX_TEXT) == "x" * MAX_TEXT
    assert clean_text("a\n  b\t\tc", one_line=True) == "a b c"
    assert clean_text("abcdef", limit=4) == "abc…"


# --- the service's answer -------------------------------------------------------------------


def _answer() -> JobStacks:
    with_locals = ReplicaStacks(
        "worker-replica-0",
        "3",
        4321,
        parse_dump(REAL_DUMP),
        None,
        "10.0.0.3",
    )
    big_id = ThreadStack(
        2**64 - 1, None, True, True, (Frame("f", "<string>", "<string>", 0, None),)
    )
    plain = ReplicaStacks("master-replica-0", None, 1234, (big_id,), None, None)
    broken = failed("ps-replica-0", "it is not a Python process (/usr/bin/bash)")
    return JobStacks("2026-12-07T15:30:00.123456Z", (plain, with_locals, broken), True)


def test_the_answer_is_written_in_the_wire_spelling() -> None:
    body = _answer().to_json()

    assert body["takenAt"] == "2026-12-07T15:30:00.123456Z"
    assert body["locals"] is True
    plain, with_locals, broken = body["replicas"]
    assert plain == {
        "taskName": "master-replica-0",
        "pid": 1234,
        "threads": [
            {
                "threadId": str(2**64 - 1),
                "name": None,
                "active": True,
                "ownsGil": True,
                "frames": [
                    {"name": "f", "filename": "<string>", "shortFilename": "<string>", "line": 0}
                ],
            }
        ],
    }
    assert with_locals["trialId"] == "3"
    assert with_locals["node"] == "10.0.0.3"
    assert with_locals["threads"][1]["threadId"] == "139698638699392"
    assert with_locals["threads"][1]["frames"][0]["locals"][0] == {
        "name": "steps",
        "repr": "3",
        "arg": True,
    }
    assert broken == {
        "taskName": "ps-replica-0",
        "error": "it is not a Python process (/usr/bin/bash)",
    }


def test_the_answer_reads_back_equal_through_json() -> None:
    answer = _answer()

    assert JobStacks.from_json(json.loads(json.dumps(answer.to_json()))) == answer


def test_a_replica_reads_back_on_its_own() -> None:
    one = _answer().replicas[1]

    assert ReplicaStacks.from_json(one.to_json()) == one


def test_the_reader_takes_a_thread_id_as_a_number_too_and_ignores_unknown_keys() -> None:
    body = _answer().to_json()
    body["replicas"][0]["threads"][0]["threadId"] = 77
    body["replicas"][0]["extra"] = {"anything": 1}
    body["version"] = 2
    del body["locals"]

    answer = JobStacks.from_json(body)

    assert answer.replicas[0].threads[0].thread_id == 77
    assert answer.locals is False


def test_an_error_reads_as_one_clean_line() -> None:
    body = {
        "takenAt": "2026-12-07T15:30:00Z",
        "replicas": [
            {
                "taskName": "ps-replica-0",
                "error": "Error: failed\n  \x1b[31mpermission\x1b[0m denied\n",
            },
            {"taskName": "ps-replica-1", "error": "", "threads": "ignored"},
        ],
    }

    first, second = JobStacks.from_json(body).replicas

    assert first.error == "Error: failed \\x1b[31mpermission\\x1b[0m denied"
    assert first.threads == ()
    assert second.error == "the dump failed"


def _wire(**changes: Any) -> dict[str, Any]:
    """The answer's JSON with the first replica's keys changed (None removes one)."""
    body = _answer().to_json()
    for key, value in changes.items():
        if value is None:
            body["replicas"][0].pop(key, None)
        else:
            body["replicas"][0][key] = value
    return body


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "the stacks answer must be an object, not an array"),
        ({"replicas": []}, "the stacks answer: 'takenAt' must be a string, not null"),
        ({"takenAt": "yesterday", "replicas": []}, "'takenAt' is not a time ('yesterday')"),
        (
            {"takenAt": "2026-12-07T15:30:00Z", "locals": "no", "replicas": []},
            "the stacks answer: 'locals' must be a boolean, not a string",
        ),
        ({"takenAt": "2026-12-07T15:30:00Z"}, "'replicas' must be an array, not null"),
        ({"takenAt": "2026-12-07T15:30:00Z", "replicas": [3]}, "replica 0 must be an object"),
        (_wire(taskName=None), "replica 0: 'taskName' must be a string, not null"),
        (_wire(taskName=""), "replica 0: 'taskName' is empty"),
        (_wire(pid="x"), "replica 0 (master-replica-0): 'pid' must be an integer or a decimal"),
        (_wire(pid=0), "replica 0 (master-replica-0): 'pid' is out of range (0)"),
        (_wire(trialId=3), "replica 0 (master-replica-0): 'trialId' must be a string or null"),
        (_wire(node=["a"]), "replica 0 (master-replica-0): 'node' must be a string or null"),
        (_wire(error=False), "replica 0 (master-replica-0): 'error' must be a string or null"),
        (_wire(threads=None), "replica 0 (master-replica-0): 'threads' must be an array, not null"),
        (_wire(threads=[]), "replica 0 (master-replica-0) has neither threads nor an error"),
        (
            _wire(threads=[{"threadId": "0x1f", "active": True, "frames": []}]),
            "replica 0 (master-replica-0) thread 0: 'threadId' must be an integer or a decimal "
            "string, not a string",
        ),
        (
            _wire(threads=[{"threadId": "1", "active": "yes", "frames": []}]),
            "replica 0 (master-replica-0) thread 0: 'active' must be a boolean",
        ),
        (
            _wire(
                threads=[
                    {
                        "threadId": "1",
                        "active": True,
                        "frames": [
                            {"name": "f", "filename": "a.py", "shortFilename": 1, "line": 1}
                        ],
                    }
                ]
            ),
            "replica 0 (master-replica-0) thread 0 frame 0: 'shortFilename' must be a string",
        ),
        (
            _wire(
                threads=[
                    {
                        "threadId": "1",
                        "active": True,
                        "frames": [
                            {"name": "f", "filename": "a.py", "line": 1, "locals": [{"repr": "1"}]}
                        ],
                    }
                ]
            ),
            "replica 0 (master-replica-0) thread 0 frame 0 local 0: 'name' must be a string",
        ),
    ],
)
def test_a_malformed_answer_says_where_and_what(raw: object, message: str) -> None:
    with pytest.raises(StackFormatError) as caught:
        JobStacks.from_json(raw)
    assert message in str(caught.value)


def test_the_answer_is_bounded_like_a_dump() -> None:
    entry = _answer().to_json()["replicas"][0]
    deep = copy.deepcopy(entry)
    deep["threads"][0]["frames"] = [
        {"name": f"f{i}", "filename": "a.py", "line": i} for i in range(MAX_FRAMES + 1)
    ]
    replicas: list[Any] = [deep, *[entry] * (MAX_REPLICAS + 4), "past the bound: never read"]
    body = {"takenAt": "2026-12-07T15:30:00Z", "replicas": replicas}

    answer = JobStacks.from_json(body)

    assert len(answer.replicas) == MAX_REPLICAS
    assert len(answer.replicas[0].threads[0].frames) == MAX_FRAMES
    assert answer.replicas[0].threads[0].frames[0].short_filename == "a.py"


# --- labels -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "label"),
    [
        (["master-replica-0"], "master 0"),
        (["ps-replica-0"], "ps 0"),
        ([f"worker-replica-{i}" for i in (3, 1, 0, 2)], "worker 0-3"),
        ([f"worker-replica-{i}" for i in (0, 2, 5, 6, 7)], "worker 0, 2, 5-7"),
        (["worker-replica-3", "worker-replica-4"], "worker 3, 4"),
        (["worker-replica-1", "worker-replica-1"], "worker 1"),
        (["worker-replica-10", "worker-replica-9", "worker-replica-11"], "worker 9-11"),
        (
            [
                "evaluator-replica-1",
                "ps-replica-0",
                "worker-replica-1",
                "master-replica-0",
                "worker-replica-0",
                "worker-replica-2",
                "worker-replica-3",
            ],
            "master 0, worker 0-3, ps 0, evaluator 1",
        ),
        (["worker-replica-0", "chief-replica-0"], "chief 0, worker 0"),
        (["parameter-server-replica-1", "worker-replica-0"], "worker 0, parameter-server 1"),
        (
            ["reader-replica-2", "evaluator-replica-0", "reader-replica-1"],
            "evaluator 0, reader 1, 2",
        ),
        (["workerpool0-0", "workerpool1-0", "workerpool1-1"], "master 0, worker 0, 1"),
        (["service", "worker-replica-0", "my-task", "service"], "worker 0, service, my-task"),
        (["worker-replica-x"], "worker-replica-x"),
        ([], ""),
    ],
)
def test_replica_labels(names: list[str], label: str) -> None:
    assert replica_label(names) == label


def test_a_trial_is_named_before_its_replicas() -> None:
    names = ["master-replica-0", "worker-replica-0", "worker-replica-1", "worker-replica-2"]

    assert replica_label(names, trial_id="3") == "trial 3 master 0, worker 0-2"


def test_a_group_of_trials_names_each_trial_once() -> None:
    same = [replica("master-replica-0", trial_id=t) for t in ("5", "2", "1", "3", "best", "07")]
    assert group_label(same) == "trials 1-3, 5, 07, best master 0"

    mixed = [
        replica("worker-replica-0", trial_id="2"),
        replica("master-replica-0", trial_id="1"),
        replica("worker-replica-1", trial_id="1"),
        replica("master-replica-0", trial_id="2"),
        replica("worker-replica-1", trial_id="2"),
        replica("worker-replica-0", trial_id="1"),
        replica("master-replica-0", trial_id="10"),
    ]
    assert group_label(mixed) == "trials 1, 2 master 0, worker 0, 1; trial 10 master 0"
    uneven = [replica("master-replica-0", trial_id="1"), replica("worker-replica-0", trial_id="2")]
    assert group_label(uneven) == "trial 1 master 0; trial 2 worker 0"

    assert group_label([replica("worker-replica-0")]) == "worker 0"
    both = [replica("master-replica-0", trial_id="4"), replica("master-replica-0")]
    assert group_label(both) == "master 0; trial 4 master 0"


# --- folding ----------------------------------------------------------------------------------


def test_identical_workers_fold_and_the_master_stays_apart() -> None:
    master = replica("master-replica-0", [spy_frame("evaluate", TASK, 500, "trainer/task.py")])
    workers = [replica(f"worker-replica-{i}", thread_id=1000 + i, pid=2000 + i) for i in range(4)]

    groups = fold([master, *workers])

    assert [g.label for g in groups] == ["master 0", "worker 0-3"]
    assert groups[1].replicas == tuple(workers)
    assert groups[1].summary == "in `pull` ← `recv_into` (idle)"
    assert groups[0].summary == "in `evaluate` (idle)"


def test_one_worker_elsewhere_stays_apart_and_groups_keep_their_first_members_order() -> None:
    workers = [replica(f"worker-replica-{i}") for i in range(4)]
    odd = replica("worker-replica-2", [spy_frame("save", TASK, 90, "trainer/task.py")])
    workers[2] = odd

    groups = fold(workers)

    assert [(g.label, len(g.replicas)) for g in groups] == [("worker 0, 1, 3", 3), ("worker 2", 1)]


def test_a_different_line_prevents_folding() -> None:
    a = replica("worker-replica-0", trainer_frames(pull_line=210))
    b = replica("worker-replica-1", trainer_frames(pull_line=211))

    assert signature(a) != signature(b)
    assert len(fold([a, b])) == 2


def test_ids_pids_locals_the_gil_and_thread_order_do_not_prevent_folding() -> None:
    a = replica("worker-replica-0", thread_id=1, pid=10)
    b = replica("worker-replica-1", thread_id=99, pid=20)
    with_gil = ThreadStack(5, b.threads[0].name, b.threads[0].active, True, b.threads[0].frames)
    reordered = ReplicaStacks(
        "worker-replica-2", None, 30, (b.threads[1], with_gil), None, "10.0.0.9"
    )
    other_locals = tuple(
        Frame(f.name, f.filename, f.short_filename, f.line, (Local("x", "1", False),))
        for f in a.threads[0].frames
    )
    with_locals = ReplicaStacks(
        "worker-replica-3",
        None,
        40,
        (ThreadStack(7, "MainThread", False, False, other_locals), a.threads[1]),
        None,
        None,
    )

    groups = fold([a, b, reordered, with_locals])

    assert len(groups) == 1
    assert groups[0].label == "worker 0-3"


def test_a_thread_name_or_activity_prevents_folding() -> None:
    a = replica("worker-replica-0")
    active = replica("worker-replica-1", active=True)
    renamed_thread = ThreadStack(1, "Thread-1", False, False, a.threads[0].frames)
    renamed = ReplicaStacks("worker-replica-2", None, 1, (renamed_thread, a.threads[1]), None, None)
    fewer = replica("worker-replica-3", loader=False)

    assert len(fold([a, active, renamed, fewer])) == 4


def test_errors_fold_by_their_text() -> None:
    bash = "it is not a Python process (/usr/bin/bash)"
    replicas = [
        failed("ps-replica-0", bash),
        replica("worker-replica-0"),
        failed("ps-replica-1", bash),
        failed("evaluator-replica-0", "no such process"),
        replica("worker-replica-1"),
    ]

    groups = fold(replicas)

    assert [(g.label, g.summary, g.error) for g in groups] == [
        ("ps 0, 1", bash, bash),
        ("worker 0, 1", "in `pull` ← `recv_into` (idle)", None),
        ("evaluator 0", "no such process", "no such process"),
    ]


def test_an_error_wins_over_threads_and_nothing_folds_to_nothing() -> None:
    both = ReplicaStacks("ps-replica-0", None, 1, replica("x").threads, "gone", None)

    assert signature(both) == ("gone", ())
    assert where(both) == "gone"
    assert fold([]) == []


# --- where ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "origin"),
    [
        ("/usr/lib/python3.11/socket.py", Origin.LIBRARY),
        ("/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py", Origin.LIBRARY),
        ("/usr/lib64/python3.12/selectors.py", Origin.LIBRARY),
        ("/usr/local/lib/python3.13t/queue.py", Origin.LIBRARY),
        ("<frozen importlib._bootstrap>", Origin.LIBRARY),
        ("/opt/venv/lib/python3.11/site-packages/torch/distributed/c10d.py", Origin.THIRD_PARTY),
        ("/usr/lib/python3/dist-packages/numpy/core/numeric.py", Origin.THIRD_PARTY),
        ("C:\\Python311\\Lib\\site-packages\\grpc\\_channel.py", Origin.THIRD_PARTY),
        ("/app/trainer/task.py", Origin.OWN),
        ("/work/lib/trainer/python_utils.py", Origin.OWN),
        ("/home/me/mylib/python3/x.py", Origin.OWN),
        ("<string>", Origin.OWN),
    ],
)
def test_frame_origins(filename: str, origin: Origin) -> None:
    assert frame_origin(filename) is origin


def test_where_names_the_own_frame_and_the_library_call_it_waits_in() -> None:
    assert where(replica("worker-replica-0")) == "in `pull` ← `recv_into` (idle)"


def test_third_party_frames_are_not_own_code() -> None:
    frames = [
        spy_frame("wait", "/opt/venv/lib/python3.11/site-packages/torch/futures.py", 40),
        spy_frame("all_reduce", "/opt/venv/lib/python3.11/site-packages/torch/dist.py", 9),
        spy_frame("step", TASK, 77, "trainer/task.py"),
    ]
    assert where(replica("worker-replica-0", frames)) == "in `step` ← `wait` (idle)"


def test_when_the_leaf_is_own_code_the_arrow_is_left_out_and_an_active_thread_is_not_idle() -> None:
    frames = [spy_frame("compute", TASK, 12, "trainer/task.py"), spy_frame("train", TASK, 300)]

    assert where(replica("master-replica-0", frames, active=True)) == "in `compute`"


def test_a_stack_all_in_the_library_names_its_leaf() -> None:
    frames = [spy_frame("select", "/usr/lib/python3.11/selectors.py", 415)]

    assert where(replica("master-replica-0", frames)) == "in `select` (idle)"


def test_without_a_main_thread_the_first_active_one_counts_else_the_first() -> None:
    idle = ThreadStack(1, "loader", False, False, (Frame("sleep", TASK, "t.py", 1, None),))
    busy = ThreadStack(2, None, True, False, (Frame("crunch", TASK, "t.py", 2, None),))

    assert main_thread([idle, busy]) is busy
    assert main_thread([idle]) is idle
    assert main_thread([]) is None
    assert where(ReplicaStacks("worker-replica-0", None, 1, (idle, busy), None, None)) == (
        "in `crunch`"
    )
    empty = ReplicaStacks("worker-replica-0", None, 1, (), None, None)
    assert where(empty) == "no threads"
    frameless = ThreadStack(3, "MainThread", False, False, ())
    assert where(ReplicaStacks("w", None, 1, (frameless,), None, None)) == "no Python frames (idle)"


def test_where_of_a_failed_replica_is_its_error() -> None:
    assert where(failed("ps-replica-0", "no such process")) == "no such process"


# --- the text listing -------------------------------------------------------------------------


def test_render_text_folds_and_lists_frames_innermost_first() -> None:
    master = replica(
        "master-replica-0",
        [spy_frame("evaluate", TASK, 500, "trainer/task.py")],
        loader=False,
        active=True,
    )
    workers = [
        ReplicaStacks(
            f"worker-replica-{i}",
            None,
            2000 + i,
            replica("w", thread_id=140406354819968 + i).threads,
            None,
            "10.0.0.3",
        )
        for i in range(4)
    ]
    broken = failed("ps-replica-0", "it is not a Python process (/usr/bin/bash)")

    lines = render_text(fold([master, *workers, broken]), locals=False)

    assert lines == [
        "master 0: in `evaluate`",
        "  (pid 1234)",
        '  Thread 140406354819968 "MainThread" (active)',
        "    evaluate (trainer/task.py:500)",
        "",
        "worker 0-3 (4 replicas, the same stacks): in `pull` ← `recv_into` (idle)",
        "  (thread ids of worker 0, pid 2000 on 10.0.0.3)",
        '  Thread 140406354819968 "MainThread" (idle)',
        "    recv_into (socket.py:705)",
        "    _Rendezvous._next (grpc/_channel.py:120)",
        "    pull (trainer/task.py:210)",
        "    train (trainer/task.py:300)",
        '  Thread 140406354819969 "loader" (idle)',
        "    Condition.wait (threading.py:327)",
        "    Thread.run (threading.py:982)",
        "",
        "ps 0: it is not a Python process (/usr/bin/bash)",
    ]


def test_render_text_lists_locals_under_their_frames_when_asked() -> None:
    one = ReplicaStacks("worker-replica-1", "3", None, parse_dump(REAL_DUMP), None, None)
    two = ReplicaStacks("worker-replica-2", "3", None, parse_dump(REAL_DUMP), None, None)

    lines = render_text(fold([one, two]), locals=True)

    assert lines == [
        "trial 3 worker 1, 2 (2 replicas, the same stacks): in `main` (idle)",
        "  (thread ids and locals of trial 3 worker 1)",
        '  Thread 139698638699392 "MainThread" (idle)',
        "    main (prog.py:9)",
        "        steps = 3",
        "        buf = <bytearray at 0x7f0e1ee2e430>",
        "    <module> (prog.py:10)",
        '  Thread 139698623547072 "loader" (idle)',
        "    worker (prog.py:4)",
        "        n = 2",
        '        label = "w"',
        '        data = {"a": 1}',
        "    Thread.run (threading.py:982)",
        "        self = <Thread at 0x7f0e1ee2dfd0>",
    ]
    without = render_text(fold([one, two]), locals=False)
    assert not any(line.startswith("        ") for line in without)
    assert without[1] == "  (thread ids of trial 3 worker 1)"


def test_render_text_keeps_lines_short_and_says_what_it_cannot_read() -> None:
    frame = Frame(
        "f",
        TASK,
        "trainer/task.py",
        3,
        (Local("big", "y" * MAX_TEXT, False), Local("gone", None, True)),
    )
    thread = ThreadStack(9, None, True, True, (frame,))
    bare = ThreadStack(10, "helper", False, False, ())
    lone = ReplicaStacks("worker-replica-0", None, None, (thread, bare), None, None)

    lines = render_text(fold([lone]), locals=True)

    assert lines[0] == "worker 0: in `f`"
    assert lines[1] == "  Thread 9 (active, holds the GIL)"
    assert lines[2] == "    f (trainer/task.py:3)"
    assert len(lines[3]) == LINE_WIDTH and lines[3].endswith("…")
    assert lines[3].startswith("        big = yyy")
    assert lines[4:] == [
        "        gone = (unreadable)",
        '  Thread 10 "helper" (idle)',
        "    (no Python frames)",
    ]
    assert all(len(line) <= LINE_WIDTH for line in lines)


def test_a_folded_error_group_counts_its_replicas() -> None:
    groups = fold([failed(f"worker-replica-{i}", "no such process") for i in range(3)])

    assert render_text(groups, locals=True) == ["worker 0-2 (3 replicas): no such process"]
    assert render_text([], locals=False) == []


def test_group_lines_are_render_texts_lines_with_what_a_view_styles() -> None:
    """The TUI styles each part of a line; the words stay ``render_text``'s."""
    workers = [replica(f"worker-replica-{i}", thread_id=140406354819968 + i) for i in range(2)]
    broken = failed("ps-replica-0", "it ended meanwhile")
    groups = fold([*workers, broken])

    lines = group_lines(groups[0], locals=False)

    assert [line.text for line in lines] == render_text(groups, locals=False)[: len(lines)]
    heading = lines[0]
    assert heading.kind is LineKind.HEADING and heading.active is False and not heading.error
    assert heading.text[heading.split :] == groups[0].summary
    assert lines[1].kind is LineKind.PROCESS
    thread = lines[2]
    assert (thread.kind, thread.active, thread.text[thread.split :]) == (
        LineKind.THREAD,
        False,
        "(idle)",
    )
    frames = [line for line in lines if line.kind is LineKind.FRAME]
    assert [(f.text[: f.split].strip(), f.origin) for f in frames[:4]] == [
        ("recv_into", Origin.LIBRARY),
        ("_Rendezvous._next", Origin.THIRD_PARTY),
        ("pull", Origin.OWN),
        ("train", Origin.OWN),
    ]
    assert frames[2].text[frames[2].split :] == "(trainer/task.py:210)"
    (error,) = group_lines(groups[1], locals=False)
    assert error.error and error.active is None
    assert (error.text[: error.split], error.text[error.split :]) == (
        "ps 0: ",
        "it ended meanwhile",
    )
