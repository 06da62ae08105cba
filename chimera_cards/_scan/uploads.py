"""Where a shell command sends files in bulk: object storage through a cloud CLI (``aws
[--endpoint-url U] s3 cp``, ``gsutil cp``, ``az storage blob upload --file``, ``rclone copy``)
and ``git push`` to a remote the skill itself added. Each is a :class:`Send` for the shared
grading in :mod:`chimera_cards._scan.sensitive`: a credential store among the files is an error
wherever it goes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from chimera_cards._scan.sensitive import Send, Taint, host_of

# user@host:path, host:path (scp, rsync, git over ssh).
REMOTE_RE = re.compile(
    r"^(?:[\w.+-]+@)?([A-Za-z0-9][\w.-]*\.[A-Za-z]{2,}|\d{1,3}(?:\.\d{1,3}){3}):"
)
CLOUD_CLIS = frozenset({"aws", "gsutil", "az", "gcloud", "rclone", "azcopy", "s3cmd", "mc"})
_UPLOAD_VERBS = frozenset(
    {"cp", "sync", "mv", "upload", "upload-batch", "copy", "copyto", "move", "moveto", "put",
     "rsync"}
)  # fmt: skip
# Verbs whose last path is the destination (`cp SRC… DST`).
_COPY_VERBS = frozenset({"cp", "sync", "mv", "copy", "copyto", "move", "moveto", "rsync"})
_BUCKETS = ("s3://", "gs://", "az://", "https://", "http://", "r2://")
_RCLONE_REMOTE_RE = re.compile(r"^[A-Za-z][\w-]*:(?!//)\S*$")
_SOURCE_FLAGS = ("--file", "-f", "--source", "-s", "--local-path")


def _sources(argv: list[str]) -> tuple[list[str], str | None]:
    """The paths and remotes a cloud CLI's arguments name, and the endpoint it talks to."""
    sources: list[str] = []
    endpoint = None
    skip = False
    for index, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg in ("--endpoint-url", "--endpoint") and index + 1 < len(argv):
            endpoint = host_of(argv[index + 1])
            skip = True
        elif arg in _SOURCE_FLAGS and index + 1 < len(argv):
            sources.append(argv[index + 1])
            skip = True
        elif arg.startswith(("--file=", "--source=")):
            sources.append(arg.split("=", 1)[1])
        elif not arg.startswith("-") and arg not in _UPLOAD_VERBS and index > 0:
            sources.append(arg)
    return sources, endpoint


def cloud_upload(
    name: str, argv: list[str], line: int, stdin: set[Taint], read: Callable[[str, int], set[Taint]]
) -> Send | None:
    """Files sent to object storage, to the endpoint named or the service's own.

    Args:
        name: the command's name (one of ``CLOUD_CLIS``).
        argv: its arguments.
        line: its line.
        stdin: what its input holds.
        read: what reading a path gives (path, line) -> taints.
    Returns:
        The send, or None when the command uploads nothing.
    """
    if not any(v in _UPLOAD_VERBS for v in argv[:8] if not v.startswith("-")):
        return None
    sources, endpoint = _sources(argv)
    remote = [a for a in sources if a.startswith(_BUCKETS) or _RCLONE_REMOTE_RE.match(a)]
    if name in ("aws", "gsutil", "gcloud", "rclone", "azcopy") and not remote:
        return None
    verb = next((v for v in argv[:8] if v in _UPLOAD_VERBS), "")
    if verb in _COPY_VERBS and len(sources) >= 2 and sources[-1] not in remote:
        # `gsutil -m cp -r gs://openpi-assets/x /local/cache/`: a copy's last path is where it
        # writes; from a bucket to this machine is a download, and uploads nothing.
        return None
    body: set[Taint] = set(stdin)
    for source in sources:
        if source not in remote:
            body |= read(source, line)
    target = remote[-1] if remote else None
    host = endpoint or (target.split("/")[2] if target and "://" in target else target)
    if name == "az" and not host:
        account = next(
            (argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--account-name"), None
        )
        host = f"{account}.blob.core.windows.net" if account else "Azure storage"
    return Send(line, host, f"{name} upload", body=body)


# remote.NAME.url / remote.NAME.pushurl: where a push to NAME goes.
_REMOTE_SETTING_RE = re.compile(r"^remote\.([^.=]+)\.(?:push)?url(?:=(.*))?$", re.I)


def _global_options(argv: list[str], remotes: dict[str, str]) -> list[str]:
    """git's words without its options; ``-c remote.m.url=URL`` before the command adds the
    remote ``m`` for that one run (and ``-C dir`` names no word of the command)."""
    out: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        if word in ("-c", "-C", "--git-dir", "--work-tree") and index + 1 < len(argv):
            remote = _REMOTE_SETTING_RE.match(argv[index + 1]) if word == "-c" else None
            if remote and remote.group(2):
                remotes[remote.group(1)] = remote.group(2)
            index += 2
            continue
        if not word.startswith("-"):
            out.append(word)
        index += 1
    return out


def git_push(
    argv: list[str], line: int, remotes: dict[str, str], files: Iterable[set[Taint]]
) -> list[Send]:
    """``git remote add NAME URL`` (remembered in ``remotes``) then ``git push NAME``: the
    unit's files, with the copies of credential stores made into them, leave for a remote the
    skill chose.

    Args:
        argv: a ``git`` command's arguments.
        line: its line.
        remotes: the remotes the unit added so far (name -> URL), updated.
        files: what earlier steps wrote to each file they wrote.
    Returns:
        The send, or none (a push to a remote the user set up, with no store copied).
    """
    argv = _global_options(argv, remotes)
    if argv[:1] == ["config"] and len(argv) >= 3:
        # git config remote.m.url URL: a remote added by its setting
        remote = _REMOTE_SETTING_RE.match(argv[1])
        if remote:
            remotes[remote.group(1)] = argv[2]
        return []
    if argv[:2] in (["remote", "add"], ["remote", "set-url"]) and len(argv) >= 4:
        remotes[argv[2]] = argv[3]
        return []
    if not argv or argv[0] != "push":
        return []
    target = argv[1] if len(argv) > 1 else None
    url = remotes.get(target or "") or (
        target if target and (REMOTE_RE.match(target) or "://" in target) else None
    )
    copied: set[Taint] = set()
    for content in files:
        # Copies of credential stores (~/.ssh, ~/.aws) into the tree; a project's own .env
        # written in place is the project's (and usually ignored by git).
        # A file forced past .gitignore (git add -f .env) is pushed on purpose.
        copied |= {
            t
            for t in content
            if t.kind == "credential" and (".env" not in t.what.lower() or "forced" in t.what)
        }
    if url is None and not copied:
        return []
    match = REMOTE_RE.match(url) if url else None
    host = (host_of(url) or (match.group(1) if match else None)) if url else None
    return [Send(line, host, "git push", body=copied)]
