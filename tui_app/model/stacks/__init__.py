"""A job's Python stacks: each replica's ``py-spy dump`` read as hostile input (``py_spy``), the
service's ``:stacks`` answer both ways (``replica_stacks``), and replicas with the same stacks
folded into one group with a one-line summary and a text listing (``folding``).

Pure: the service runs py-spy and sends the answer; the TUI and the CLI show it.
"""

from tui_app.model.stacks.folding import (
    LineKind,
    Origin,
    Signature,
    StackGroup,
    StackLine,
    fold,
    frame_origin,
    group_label,
    group_lines,
    main_thread,
    render_text,
    replica_label,
    signature,
    where,
)
from tui_app.model.stacks.py_spy import (
    MAX_FRAMES,
    MAX_LOCALS,
    MAX_TEXT,
    MAX_THREADS,
    Frame,
    Local,
    StackFormatError,
    ThreadStack,
    clean_text,
    parse_dump,
)
from tui_app.model.stacks.replica_stacks import (
    MAX_REPLICAS,
    NO_STACKS_ENDPOINT,
    JobStacks,
    ReplicaStacks,
)

__all__ = [
    "MAX_FRAMES",
    "MAX_LOCALS",
    "MAX_REPLICAS",
    "MAX_TEXT",
    "MAX_THREADS",
    "NO_STACKS_ENDPOINT",
    "Frame",
    "JobStacks",
    "LineKind",
    "Local",
    "Origin",
    "ReplicaStacks",
    "Signature",
    "StackFormatError",
    "StackGroup",
    "StackLine",
    "ThreadStack",
    "clean_text",
    "fold",
    "frame_origin",
    "group_label",
    "group_lines",
    "main_thread",
    "parse_dump",
    "render_text",
    "replica_label",
    "signature",
    "where",
]
