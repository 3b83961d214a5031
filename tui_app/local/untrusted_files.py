"""Files in folders a replica can write: opened without following a link, never blocking, capped.

A container replica sees its hypertune folder and a local ``jobDir`` through read-write mounts,
and a replica on a Ray node writes its own work dir there. Anything in those folders may have
been put there by code the user did not write: a symbolic link to ``~/.bashrc``, a FIFO that no
one ever writes, a device node, a file of many gigabytes. The service runs as the user and
outside the container, so if it opened such a name as an ordinary path, it would read or append
to whatever the link names, block its event loop in ``open()``, or fill its memory.

Every open here walks from a folder the service made (``base``, trusted), one component at a
time relative to a directory descriptor, each with ``O_NOFOLLOW``; the last one also with
``O_NONBLOCK`` (a FIFO opens at once instead of waiting for a writer), and it must be a regular
file (checked before opening, so a device is never opened, and again on the descriptor, so a
swap in between is caught). Reads and writes take a byte cap. What is refused raises
``UntrustedFileError``, whose message names the file and says what it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

__all__ = [
    "FileTooLargeError",
    "UntrustedFileError",
    "append_beneath",
    "files_beneath",
    "opened_beneath",
    "read_at",
    "read_beneath",
    "size_beneath",
]

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW


class UntrustedFileError(OSError):
    """A replica-writable name is not a regular file (a link, a FIFO, a device, a folder)."""


class FileTooLargeError(UntrustedFileError):
    """A replica-writable file holds, or would hold, more than its cap."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _parts(relative: str | PurePosixPath) -> tuple[str, ...]:
    path = PurePosixPath(relative)
    parts = path.parts
    if not parts or path.is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise UntrustedFileError(errno.EINVAL, f"{str(relative)!r} is not a relative file name")
    return parts


def _refuse(shown: Path, mode: int) -> UntrustedFileError:
    return UntrustedFileError(
        errno.EPERM, f"{shown} is {_kind(mode)}, not a regular file: it is not opened"
    )


def _folder(base: Path, parts: tuple[str, ...], create: bool) -> int:
    """A descriptor of ``base/parts...`` (each component below ``base`` opened without following
    a link; missing ones made 0700 when ``create``)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            try:
                nxt = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
                nxt = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                    raise _refuse(base.joinpath(*parts[: i + 1]), mode) from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_file(dir_fd: int, name: str, flags: int, shown: Path, mode: int = 0o600) -> int:
    """Open ``name`` in ``dir_fd`` as a regular file only (see the module doc)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(shown, st.st_mode)
    try:
        fd = os.open(name, flags | _NOFOLLOW | os.O_NONBLOCK, mode, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            raise _refuse(shown, st.st_mode) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _refuse(shown, st.st_mode)
    return fd


def _open_beneath(base: Path, relative: str | PurePosixPath, flags: int, create_dirs: bool) -> int:
    parts = _parts(relative)
    folder = _folder(base, parts[:-1], create_dirs)
    try:
        return _open_file(folder, parts[-1], flags, base.joinpath(*parts))
    finally:
        os.close(folder)


def size_beneath(base: Path, relative: str | PurePosixPath) -> int:
    """The size of ``base/relative``; 0 when it (or a folder on the way) does not exist."""
    try:
        fd = _open_beneath(base, relative, os.O_RDONLY, create_dirs=False)
    except FileNotFoundError:
        return 0
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_beneath(
    base: Path, relative: str | PurePosixPath, offset: int = 0, limit: int = 1 << 20
) -> bytes:
    """At most ``limit`` bytes of ``base/relative`` from ``offset`` (b"" past its end).

    Raises:
        FileNotFoundError: it does not exist (yet).
        UntrustedFileError: it is not a regular file.
    """
    with opened_beneath(base, relative) as fd:
        return read_at(fd, offset, limit)


@contextlib.contextmanager
def opened_beneath(base: Path, relative: str | PurePosixPath) -> Iterator[int]:
    """A read-only descriptor of ``base/relative``, for several reads of one version of a file
    that its writer may replace meanwhile (``os.fstat`` gives its size, ``read_at`` its bytes).

    Raises:
        FileNotFoundError: it does not exist (yet).
        UntrustedFileError: it is not a regular file.
    """
    fd = _open_beneath(base, relative, os.O_RDONLY, create_dirs=False)
    try:
        yield fd
    finally:
        os.close(fd)


def read_at(fd: int, offset: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``offset`` of an open file (fewer at its end)."""
    chunks: list[bytes] = []
    got = 0
    while got < limit:
        data = os.pread(fd, min(limit - got, 1 << 20), offset + got)
        if not data:
            break
        chunks.append(data)
        got += len(data)
    return b"".join(chunks)


def append_beneath(
    base: Path, relative: str | PurePosixPath, data: bytes, cap: int | None = None
) -> int:
    """Append ``data`` to ``base/relative`` (made 0600, its folders 0700, when missing) in one
    write; returns the new size.

    Raises:
        UntrustedFileError: it is not a regular file.
        FileTooLargeError: the file would grow past ``cap`` bytes (nothing is written).
    """
    fd = _open_beneath(base, relative, os.O_WRONLY | os.O_APPEND | os.O_CREAT, create_dirs=True)
    try:
        size = os.fstat(fd).st_size
        if cap is not None and size + len(data) > cap:
            raise FileTooLargeError(
                errno.EFBIG,
                f"{base.joinpath(*_parts(relative))} would grow past its cap of {cap} bytes",
            )
        if data:
            os.write(fd, data)
        return size + len(data)
    finally:
        os.close(fd)


def files_beneath(
    root: Path, wanted: Callable[[str], bool], cap: int
) -> Iterator[tuple[Path, bytes | UntrustedFileError]]:
    """Each regular file under ``root`` whose name ``wanted`` accepts, with its bytes (at most
    ``cap``: a larger file gives a ``FileTooLargeError`` instead, as does a name that is not a
    regular file). Folders are walked by descriptor and links are never followed, so nothing
    outside ``root`` is read. A missing ``root`` gives nothing."""
    if not root.is_dir():
        return
    try:
        walk = os.fwalk(root, follow_symlinks=False)
        for top, _dirs, names, dir_fd in walk:
            for name in names:
                if not wanted(name):
                    continue
                path = Path(top) / name
                try:
                    fd = _open_file(dir_fd, name, os.O_RDONLY, path)
                except UntrustedFileError as exc:
                    yield path, exc
                    continue
                except OSError:
                    continue  # gone meanwhile
                try:
                    size = os.fstat(fd).st_size
                    if size > cap:
                        yield (
                            path,
                            FileTooLargeError(
                                errno.EFBIG, f"{path} holds {size} bytes, more than the {cap} read"
                            ),
                        )
                        continue
                    yield path, read_at(fd, 0, cap)
                finally:
                    os.close(fd)
    except OSError:
        return
