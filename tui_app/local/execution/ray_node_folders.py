"""A Ray node's own folders for replicas: where they are and that only this user may enter them.

The replica actor (``ray_replica``) keeps work dirs, package copies and credentials there, and
``ray_node_env`` builds job environments under the same root; both take the rules from here, so
neither needs the other at import time.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

__all__ = [
    "FILE_MODE",
    "NODE_ROOT_ENV",
    "PRIVATE_MODE",
    "NodeRootError",
    "node_folder",
    "node_root",
]

NODE_ROOT_ENV = "TUI_APP_RAY_NODE_ROOT"


def node_root() -> Path:
    """Where replicas of this node keep their work dirs and package copies: the node's own
    disk (``$TUI_APP_RAY_NODE_ROOT``, else a folder in the system temp dir per user)."""
    given = os.environ.get(NODE_ROOT_ENV)
    if given:
        return Path(given)
    return Path("/tmp") / f"tui-app-ray-{os.getuid()}"


class NodeRootError(OSError):
    """A folder under the node's root cannot be made private: another user owns it, or it is
    a link or a file. The message names it and says what to do."""


PRIVATE_MODE = 0o700
FILE_MODE = 0o600


def _private_folder(path: Path) -> None:
    """``path`` a folder only this user may enter: made 0700, or one of ours found (made by an
    older version, 0755) and set to 0700. A link or another user's folder in its place is
    refused: the default root is in the world-writable ``/tmp``, where anyone may have made
    ``tui-app-ray-<uid>`` first, to read the credentials written into it."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, PRIVATE_MODE)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        what = "a link" if stat.S_ISLNK(st.st_mode) else "not a folder"
        raise NodeRootError(
            errno.ENOTDIR,
            f"{path} is {what}; the replicas' folders on this node must be real folders of the "
            f"service's user. Remove it, or point {NODE_ROOT_ENV} elsewhere.",
        )
    if st.st_uid != os.getuid():
        raise NodeRootError(
            errno.EPERM,
            f"{path} belongs to user {st.st_uid}, not to this one ({os.getuid()}): replicas' "
            f"credentials are never written there. Remove it, or point {NODE_ROOT_ENV} at a "
            "folder of this user.",
        )
    if stat.S_IMODE(st.st_mode) != PRIVATE_MODE:
        os.chmod(path, PRIVATE_MODE)


def node_folder(root: Path, *parts: str) -> Path:
    """``root/parts...``, every folder from ``root`` down private (``_private_folder``); the
    folders above ``root`` are made as usual. A folder removed meanwhile by an actor that
    cleaned up (an empty run folder) is made again."""
    root.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(5):
        path = root
        try:
            _private_folder(path)
            for part in parts:
                path = path / part
                _private_folder(path)
            return path
        except FileNotFoundError:  # a folder above was removed between two steps
            if attempt == 4:
                raise
    raise AssertionError("unreachable")
