"""Write a text file so that readers see either the old file or the whole new one.

A report or results file written by CI must never be left half-written when the
run is killed: the text goes to a temporary file in the same directory (so the
final rename stays on one filesystem), is flushed to disk, and then replaces the
target with ``os.replace``, which is atomic on POSIX and Windows.

A symlink is written through, never replaced: the temporary file goes beside the file the
link resolves to.  A path that is neither a regular file nor a directory (a pipe such as
``/dev/stdout`` in ``cmd | head``, a FIFO, a terminal, a socket) is written in place, as
``open(path, "w")`` would: there is nothing to replace atomically.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

__all__ = ["atomic_write_text", "writes_in_place"]


def _new_file_mode() -> int:
    """Permissions an ordinary ``open(path, "w")`` would give a new file."""
    # There is no getter for the umask: set it and put it straight back.
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def writes_in_place(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (symlinks followed) is an existing file that is neither regular nor a
    directory -- a pipe, FIFO, terminal or socket -- so it is written in place."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def atomic_write_text(
    path: str | os.PathLike[str],
    text: str | Iterable[str],
    encoding: str = "utf-8",
) -> Path:
    """Atomically replace ``path`` with ``text`` and return the path.

    ``text`` is a string or an iterable of string chunks (so a large document can
    be streamed).  If anything fails before the final rename -- including an
    exception raised by the chunk iterable, or ``KeyboardInterrupt`` -- the
    previous content of ``path`` (if any) is left untouched and the temporary
    file is removed.  Newlines are written as given, never translated, so the
    bytes on disk are the same on every platform.

    A symlink stays a symlink (the file it resolves to gets the text); a pipe or another
    special file is written in place (see :func:`writes_in_place`); a directory raises
    ``IsADirectoryError``.
    """
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(f"atomic_write_text: cannot write {str(target)!r}: "
                                "it is a directory")
    if writes_in_place(target):
        with open(target, "w", encoding=encoding, newline="") as handle:
            _write(handle, text)
        return target
    final = Path(os.path.realpath(target))  # a symlink's target (even a missing one)
    directory = final.parent
    if not directory.is_dir():
        raise FileNotFoundError(
            f"atomic_write_text: cannot write {str(target)!r}: "
            f"directory {str(directory)!r} does not exist"
        )
    mode = final.stat().st_mode & 0o7777 if final.exists() else _new_file_mode()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as handle:
            _write(handle, text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates the file 0600; give it the permissions the target should have.
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_directory(directory)
    return target


def _write(handle: TextIO, text: str | Iterable[str]) -> None:
    if isinstance(text, str):
        handle.write(text)
    else:
        for chunk in text:
            handle.write(chunk)


def _fsync_directory(directory: Path) -> None:
    """Persist the rename itself (POSIX only: Windows cannot open a directory)."""
    if os.name != "posix":
        return
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
