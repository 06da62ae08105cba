"""Writing and removing a skill folder on disk, atomically, and recovering an interrupted write."""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from chimera_cards._bundles.bundle import (
    Bundle,
    check_path,
)
from chimera_cards._bundles.folderscan import (
    RECEIPT_NAME,
)
from chimera_cards._install.folderlock import serialized
from chimera_cards._install.receipt import (
    ForeignFolderError,
    InstallError,
    NotInstalledError,
    Receipt,
    read_index,
    read_receipt,
    record_installs,
    utc_now,
)
from chimera_cards.errors import UsageError

# Hidden siblings this module makes in DIR while writing or removing a skill.
_TMP_MARK = ".chimera-tmp-"
_OLD_MARK = ".chimera-old-"


# -- writing and removing ---------------------------------------------------------------------


@contextmanager
def _disk_errors(what: str) -> Iterator[None]:
    """An OSError from the file system (a path through a file, no permission, a full disk) as
    one InstallError line."""
    try:
        yield
    except OSError as exc:
        raise InstallError(f"{what}: {exc.strerror or exc}") from None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    import ctypes  # only here: most runs never replace a folder

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _rmtree(path: Path, *, ignore_errors: bool = False) -> None:
    import shutil  # loaded by the commands that write, not by check

    shutil.rmtree(path, ignore_errors=ignore_errors)


def _sibling(directory: Path, name: str, mark: str) -> Path:
    return directory / f".{name}{mark}{os.urandom(4).hex()}"


def _hidden(directory: Path) -> list[str]:
    """The names of the hidden entries of ``directory`` (where leftovers would be)."""
    try:
        with os.scandir(directory) as it:
            return [e.name for e in it if e.name.startswith(".")]
    except OSError:  # missing or not a folder: writing there reports it as one error line
        return []


def recover(directory: str | os.PathLike, name: str, hidden: Iterable[str] | None = None) -> None:
    """Finish what a crashed write or removal of ``name`` left behind.

    A stranded old copy (the process died between the two renames of the fallback swap) goes back
    in place when the folder is missing; temp folders are deleted.

    Args:
        directory: the skills directory.
        name: the skill folder's name.
        hidden: the directory's hidden entry names, when the caller listed them already (one
            listing for a batch of skills instead of one per skill).
    """
    directory = Path(directory)
    target = directory / name
    names = list(_hidden(directory) if hidden is None else hidden)
    for entry in names:
        if entry.startswith(f".{name}{_OLD_MARK}"):
            if not target.exists():
                os.rename(directory / entry, target)
            else:
                _rmtree(directory / entry, ignore_errors=True)
    for entry in names:
        if entry.startswith(f".{name}{_TMP_MARK}"):
            if (directory / entry).is_symlink():  # a link write_link had not yet moved in
                (directory / entry).unlink(missing_ok=True)
            else:
                _rmtree(directory / entry, ignore_errors=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_files(root: Path, bundle: Bundle, receipt: Receipt, rehash: bool) -> None:
    # Plain strings and os calls: with thousands of small files the pathlib objects cost more
    # than the writes.
    base = os.fspath(root)
    os.mkdir(base, 0o755)
    made: set[str] = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    sha256 = hashlib.sha256
    for f in bundle.files:
        parts = check_path(f.path)  # the store's bundles were checked; a path is never trusted
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in made:
                os.mkdir(f"{base}/{folder}", 0o755)
                made.add(folder)
        data = bundle.contents[f.path]
        if len(data) != f.size or (rehash and sha256(data).hexdigest() != f.sha256):
            raise InstallError(f"{receipt.name}: {f.path} does not match its manifest entry")
        # 0o777 / 0o666 less the umask, as git and cp do.
        fd = os.open(f"{base}/{f.path}", flags, 0o777 if f.executable else 0o666)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    fd = os.open(f"{base}/{RECEIPT_NAME}", flags, 0o666)
    try:
        _write_all(fd, receipt.to_bytes())
    finally:
        os.close(fd)


def _replace_folder(directory: Path, name: str, new: Path) -> None:
    """Put ``new`` where the folder ``directory/name`` is, in one swap where the kernel can
    (else two renames, after which ``recover`` puts a stranded old copy back), and delete the
    old folder."""
    target = directory / name
    if _exchange(new, target):
        _rmtree(new)  # now the old folder
        return
    old = _sibling(directory, name, _OLD_MARK)
    os.rename(target, old)
    os.rename(new, target)
    _rmtree(old)


@serialized()
def write_skill(
    directory: str | os.PathLike,
    bundle: Bundle,
    *,
    name: str,
    store: str,
    force: bool = False,
    now: str | None = None,
    record: bool = True,
    rehash: bool = True,
    hidden: Iterable[str] | None = None,
) -> Receipt:
    """Write ``bundle`` to ``directory/name/`` atomically, with its receipt, and record it.

    Args:
        directory: the skills directory (created if missing).
        bundle: the exact files to write (their bytes are re-hashed against the manifest).
        name: the folder name (the skill's name).
        store: the store path, for the receipt.
        force: replace a folder or link this tool did not make.
        now: the time to record (default: now, UTC).
        record: add it to the directory's index now (False: the caller calls
            ``record_installs`` once for a batch).
        rehash: hash every file against the manifest while writing (False only for a bundle
            just read with ``Store.get_bundle``, which re-hashed every file itself).
        hidden: the directory's hidden entries as listed before a batch (see ``recover``).
    Returns:
        The receipt written.
    Raises:
        ForeignFolderError: a folder without our receipt, or a link we did not make, is there
            and ``force`` is false.
        InstallError: the target is a file, or a file does not match its manifest entry.
    """
    directory = Path(directory)
    check_name(name)
    with _disk_errors(f"cannot write {directory / name}"):
        directory.mkdir(parents=True, exist_ok=True)
        recover(directory, name, hidden)
        target = directory / name
        is_link = target.is_symlink()
        if not is_link and target.exists() and not target.is_dir():
            raise InstallError(f"{target}: exists and is not a folder; refusing to write there")
        if not force:
            refuse_foreign(directory, name)
        receipt = Receipt(
            name=name, digest=bundle.digest, store=store, installed_at=now or utc_now()
        )
        tmp = _sibling(directory, name, _TMP_MARK)
        try:
            _write_files(tmp, bundle, receipt, rehash)
            if is_link:
                # A link (npx's, or ours) gives way to the folder in one step where the kernel
                # can swap the two; the link is then what sits at the temp name.
                if _exchange(tmp, target):
                    os.unlink(tmp)
                else:
                    os.unlink(target)
                    os.rename(tmp, target)
            elif not target.exists():
                os.rename(tmp, target)
            else:
                _replace_folder(directory, name, tmp)
        except BaseException:
            _rmtree(tmp, ignore_errors=True)
            raise
    if record:
        record_installs(directory, {name: receipt.index_entry()})
    return receipt


@serialized(create=False)
def remove_skill(directory: str | os.PathLike, name: str, *, force: bool = False) -> Receipt | None:
    """Remove ``directory/name/`` if this tool installed it (moved aside in one rename first, so
    an agent never sees half a folder), and forget it in the index.

    Args:
        directory: the skills directory.
        name: the skill folder's name.
        force: remove it even without our receipt.
    Returns:
        The receipt the folder had (None when forced on a foreign folder, or already gone but
        still recorded).
    Raises:
        NotInstalledError: nothing there and nothing recorded, or a folder we did not install.
    """
    directory = Path(directory)
    check_name(name)
    with _disk_errors(f"cannot remove {directory / name}"):
        recover(directory, name)
        target = directory / name
        recorded = name in read_index(directory)
        if not target.exists() and not target.is_symlink():
            if not recorded:
                raise NotInstalledError(f"{target}: not installed")
            record_installs(directory, {name: None})
            return None
        if target.is_symlink():
            # Only the link goes, never what it leads to.
            if not force and not is_our_link(directory, name):
                raise NotInstalledError(
                    f"{target}: is a link chimera-cards did not make; pass --force to remove "
                    "the link (what it leads to is left alone)"
                )
            target.unlink()
            record_installs(directory, {name: None})
            return None
        receipt = read_receipt(target) if target.is_dir() else None
        if receipt is None and not force:
            raise NotInstalledError(
                f"{target}: was not installed by chimera-cards; pass --force to remove it"
            )
        if not target.is_dir():
            target.unlink()
        else:
            old = _sibling(directory, name, _TMP_MARK)
            os.rename(target, old)
            _rmtree(old)
    record_installs(directory, {name: None})
    return receipt


def is_our_link(directory: Path, name: str) -> bool:
    """Whether ``directory/name`` is the link ``write_link`` made there (recorded in the index
    with the same text)."""
    recorded = read_index(directory).get(name, {}).get("link")
    try:
        return recorded is not None and os.readlink(directory / name) == recorded
    except OSError:
        return False


def refuse_foreign(directory: Path, name: str) -> None:
    """Refuse to replace ``directory/name`` when this tool did not make it.

    Raises:
        ForeignFolderError: a link we did not make, or a folder without our receipt.
    """
    target = directory / name
    if target.is_symlink():
        if is_our_link(directory, name):
            return
        try:
            leads = os.readlink(target)
        except OSError:
            leads = "?"
        raise ForeignFolderError(
            f"{target}: is a link to {leads} that chimera-cards did not make (npx skills makes "
            "such links); pass --force to replace it with a copy, or install --link"
        )
    if target.exists() and read_receipt(target) is None:
        raise ForeignFolderError(
            f"{target}: exists and was not installed by chimera-cards; pass --force to replace it"
        )


@serialized()
def write_link(
    directory: str | os.PathLike,
    name: str,
    canonical: Path,
    *,
    digest: str,
    force: bool = False,
    now: str | None = None,
) -> tuple[str, dict]:
    """Make ``directory/name`` a relative link to ``canonical`` (npx's layout), atomically.

    Args:
        directory: an agent's skills folder (created if missing).
        name: the skill's name.
        canonical: the installed folder the link leads to.
        digest: the bundle digest installed there, for the index.
        force: replace a folder or link this tool did not make.
        now: the time to record (default: now, UTC).
    Returns:
        (action: "linked" | "relinked" | "unchanged", the index entry recorded).
    Raises:
        ForeignFolderError: something this tool did not make is there and ``force`` is false.
        InstallError: a file is there, or the folder cannot be written.
    """
    from chimera_cards._bundles.links import link_text  # only for --link

    directory = Path(directory)
    check_name(name)
    target = directory / name
    with _disk_errors(f"cannot write {target}"):
        directory.mkdir(parents=True, exist_ok=True)
        text = link_text(canonical, directory)
        entry = {"digest": digest, "installed_at": now or utc_now(), "link": text}
        is_link = target.is_symlink()
        if is_link and os.readlink(target) == text:
            action = "unchanged"
        else:
            if not is_link and target.exists() and not target.is_dir():
                raise InstallError(f"{target}: exists and is not a folder; refusing to replace")
            if not force:
                refuse_foreign(directory, name)
            action = "relinked" if is_link or target.exists() else "linked"
            tmp = _sibling(directory, name, _TMP_MARK)
            os.symlink(text, tmp)
            try:
                if is_link or not target.exists():
                    os.replace(tmp, target)  # a link over a link: one rename
                else:
                    _replace_folder(directory, name, tmp)
            except BaseException:
                if tmp.is_symlink():
                    tmp.unlink()
                raise
    record_installs(directory, {name: entry})
    return action, entry


def check_name(name: str) -> str:
    """Refuse a name that cannot be one folder directly inside the skills directory."""
    if not name or name.startswith(".") or "/" in name or "\\" in name or "\x00" in name:
        raise UsageError(f"{name!r} cannot be a skill folder name")
    return name
