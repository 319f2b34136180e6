"""Output files: checked before the work starts, written whole or not at all, and never lost.

A destination in a missing folder is refused before anything is judged or scored. A file is written
to a temporary name beside it and renamed into place, so an interrupted write leaves the old file (or
none), never half of one. When the write still fails after the work is done (the disk filled up, the
folder was removed), the output is kept in the first place that takes it (beside the intended path,
then the current folder, then the temporary folder) and the error says where it went. An output written
as the work goes (a streamed run log) is read back from its open file when its folder went away.

A write killed before its rename (the process ended, the machine went down) leaves its hidden temporary
file; the next write to the same path removes it, once it is stale: unchanged for STALE_AFTER seconds
and, where the system has `flock` (not on Windows), locked by no writer. Every writer holds that lock on
its temporary file while the file is open, so a long run writing slowly keeps its file. An output that is
a folder (an adapted judge) is built in a hidden temporary folder, named, locked and removed the same way.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, BinaryIO

from citeaudit.errors import DestinationError

if sys.platform != "win32":
    import fcntl
else:  # Windows: an open file cannot be removed, which protects a live writer's file
    fcntl = None

STALE_AFTER = 3600  # seconds a temporary file is left unchanged before the next write may remove it


def check_destination(path: str | Path, what: str, folder_output: bool = False) -> None:
    """Refuse, before any work, a path that cannot be written: `what` names it ("--out", "the store").
    With `folder_output` the output is a folder, which may be there already (what it holds is the caller's
    to judge)."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir() and not folder_output:
        raise DestinationError(f"{what} {path} is a folder; give a file path")
    if not folder.exists():
        raise DestinationError(f"{what} {path}: folder {folder} does not exist (create it first)")
    if not folder.is_dir():
        raise DestinationError(f"{what} {path}: {folder} is not a folder")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise DestinationError(f"{what} {path} is not writable")


def temporary_beside(path: str | Path) -> tuple[int, str]:
    """A new hidden file beside `path` (`.NAME.XXXXXXXX.tmp`), opened for writing, to be renamed onto it.
    It is locked while the descriptor is open (see `remove_stale_temporaries`); stale ones an interrupted
    write left for the same path are removed first.

    Created with the mode any new file gets (0666 less the umask), not `mkstemp`'s 0600: the renamed
    output must be as readable as a file the user's other tools write. Returns (descriptor, name)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd, name = _new_beside(path, lambda name: os.open(name, flags, 0o666))
    return fd, str(name)


def temporary_for_stream(path: str | Path, what: str) -> tuple[int, str]:
    """`temporary_beside(path)` for an output written as the work goes. When its folder went away after it
    was checked, the file is made beside the first fallback place that takes it instead (`write_output`'s),
    where `put_in_place` keeps the output at the end, and says so, rather than losing the run."""
    try:
        return temporary_beside(path)
    except OSError as err:
        reason = err.strerror or str(err)
    for place in _fallbacks(Path(path)):
        try:
            return temporary_beside(place)
        except OSError:
            continue
    raise DestinationError(f"could not write {what} {path} ({reason}), nor anywhere else")


@contextmanager
def temporary_folder_beside(path: str | Path, what: str) -> Iterator[Path]:
    """A new hidden folder beside `path` (`.NAME.XXXXXXXX.tmp`), for work to be renamed onto `path` or
    thrown away: named and locked as `temporary_beside`'s files are, so that what a killed run leaves is
    removed by a later one, and removed with whatever is still in it on leaving. Made with the mode any
    new folder gets (0777 less the umask). A DestinationError naming `what` when it cannot be made."""

    def make(name: Path) -> int | None:
        os.mkdir(name)
        return os.open(name, os.O_RDONLY) if fcntl is not None else None  # a folder's lock is on its descriptor

    try:
        fd, name = _new_beside(path, make)
    except OSError as err:
        folder = Path(path).parent if str(Path(path).parent) else Path(".")
        raise DestinationError(f"{what} {path}: cannot make a folder in {folder} ({err.strerror or err})") from None
    try:
        yield name
    finally:
        shutil.rmtree(name, ignore_errors=True)  # before the lock goes: nobody takes it for a dead run's
        if fd is not None:
            os.close(fd)


def _new_beside(path: str | Path, make: Callable[[Path], int | None]) -> tuple[int | None, Path]:
    """`make(name)` with a free `.NAME.XXXXXXXX.tmp` name beside `path` (it raises FileExistsError when the
    name is taken), the descriptor it returns locked; stale ones an interrupted write left are removed first."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    remove_stale_temporaries(target)
    for _ in range(100):
        name = folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = make(name)
        except FileExistsError:
            continue
        if fcntl is not None and fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new one: nobody else holds it
        return fd, name
    raise FileExistsError(f"no free temporary name beside {path}")


def remove_stale_temporaries(path: str | Path, stale_after: float = STALE_AFTER) -> list[Path]:
    """Remove the temporary files and folders interrupted writes left beside `path` (`.NAME.XXXXXXXX.tmp`,
    as `temporary_beside` and `temporary_folder_beside` name them): those unchanged for `stale_after`
    seconds (a folder: nothing in it either) and locked by no writer. Anything that cannot be looked at or
    removed is left as it is. Returns what was removed."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    pattern = re.compile(re.escape(f".{target.name}.") + r"[0-9a-f]{8}\.tmp")
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(folder) if pattern.fullmatch(e.name)]
    except OSError:
        return removed
    for entry in entries:
        try:
            folder_left = entry.is_dir(follow_symlinks=False)
            if not (folder_left or entry.is_file(follow_symlinks=False)):
                continue
            if time.time() - _last_change(entry) < stale_after or _held(entry.path):
                continue
            shutil.rmtree(entry.path) if folder_left else os.unlink(entry.path)
        except OSError:  # gone already, or not ours to read or remove
            continue
        removed.append(Path(entry.path))
    return removed


def _last_change(entry: os.DirEntry) -> float:
    """When the file, or the folder or anything in it, last changed."""
    latest = entry.stat(follow_symlinks=False).st_mtime
    if entry.is_dir(follow_symlinks=False):
        for root, folders, files in os.walk(entry.path, onerror=_raise):
            for name in (*folders, *files):
                latest = max(latest, os.lstat(os.path.join(root, name)).st_mtime)
    return latest


def _raise(err: OSError) -> None:
    raise err  # a folder that cannot be read through cannot be known to be stale


def _held(path: str) -> bool:
    """Whether a live writer holds the file's lock (False where the system has no `flock`)."""
    if fcntl is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: locked
        return True
    finally:
        os.close(fd)  # and the lock taken here with it
    return False


def _write_atomically(path: Path, write: Callable[[BinaryIO], None]) -> None:
    fd, temporary = temporary_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _fallbacks(path: Path) -> list[Path]:
    name = f"{path.stem}.{os.getpid()}{path.suffix or '.txt'}"
    return [path.with_name(name), Path.cwd() / name, Path(tempfile.gettempdir()) / name]


def write_output(path: str | Path, text: str, what: str) -> None:
    """Write `text` to `path` whole. When that fails, keep it elsewhere and raise a DestinationError
    that names both places, so finished work is never lost to an unwritable path."""
    write_output_with(path, lambda fh: fh.write(text.encode("utf-8")), what)


def write_output_with(path: str | Path, write: Callable[[BinaryIO], None], what: str) -> None:
    """`write_output` for an output written in pieces: `write(fh)` writes it whole to a binary file, and
    is called again for each place tried."""
    target = Path(path)
    try:
        _write_atomically(target, write)
        return
    except OSError as err:
        reason = err.strerror or str(err)
    for place in _fallbacks(target):
        try:
            _write_atomically(place, write)
        except OSError:
            continue
        raise DestinationError(f"could not write {what} {path} ({reason}); it was written to {place} instead")
    raise DestinationError(f"could not write {what} {path} ({reason}), nor anywhere else")


def put_in_place(fh: IO, temporary: str, path: str | Path, what: str) -> None:
    """Rename a file written as it went (at `temporary`, from `temporary_beside`, still open as `fh`) onto
    `path`, and close it. When the rename fails (the folder was removed while the file was written), the
    content is read back through the open handle, which still holds every byte of a file whose folder is
    gone, and kept as `write_output` keeps an output: at `path` if it can be written after all, else in
    the first fallback place, and the DestinationError says where."""
    try:
        fh.flush()
        os.replace(temporary, path)
    except OSError:
        try:
            write_output_with(path, lambda out: _copy_from_start(fh.fileno(), out), what)
        finally:
            fh.close()
            Path(temporary).unlink(missing_ok=True)
    else:
        fh.close()


def _copy_from_start(fd: int, out: BinaryIO) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        out.write(chunk)
