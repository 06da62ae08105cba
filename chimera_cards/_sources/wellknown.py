"""Skills a web site publishes at ``/.well-known/agent-skills/index.json``.

The discovery index (the shape ``npx skills add https://site`` reads) comes in two forms:
version 0.1 lists each skill's ``files`` below ``/.well-known/agent-skills/NAME/``; version 0.2
(``$schema`` ``…/discovery/0.2.0/schema.json``) gives each skill one artifact ``url`` (a
``SKILL.md`` or an archive) with a ``sha256:`` ``digest`` of its bytes, checked before anything is
read. ``.well-known/skills`` is the older folder name; both are tried, at the URL's path first and
then at the site's root. Everything here crossed the network: the importer taints it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from chimera_cards._bundles.bundle import SKILL_FILE, check_path
from chimera_cards.errors import ChimeraError

if TYPE_CHECKING:
    import ssl


WELL_KNOWN_PATHS = (".well-known/agent-skills", ".well-known/skills")
INDEX_FILE = "index.json"
DISCOVERY_SCHEMA_V2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
MAX_INDEX_BYTES = 1 << 20
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_IN_PATH = re.compile(r"/\.well-known/(?P<known>agent-skills|skills)(?:/(?P<rest>.*))?$")


class WellKnownError(ChimeraError):
    """A discovery index, or a skill it lists, could not be read or did not check out."""


@dataclass(frozen=True)
class Entry:
    """One skill of a discovery index."""

    name: str
    description: str
    files: tuple[str, ...] = ()  # version 0.1: paths below the skill's folder
    url: str = ""  # version 0.2: the artifact, absolute
    kind: str = ""  # version 0.2: "skill-md" or "archive"
    digest: str = ""  # version 0.2: "sha256:<hex>" of the artifact's bytes


@dataclass(frozen=True)
class Discovery:
    """A discovery index that was found, and where."""

    index_url: str
    folder_url: str  # …/.well-known/agent-skills (version 0.1 files live below it)
    entries: tuple[Entry, ...]
    wanted: str | None = None  # the skill a URL of one skill's folder names


def index_candidates(url: str) -> list[tuple[str, str, str | None]]:
    """The index URLs to try for ``url``, in order: (index URL, folder URL, skill named).

    Args:
        url: a site, a page of it, a ``/.well-known/agent-skills[/NAME]`` URL or an index URL.
    Returns:
        Candidates, the most specific first.
    """
    parts = urlsplit(url)
    root = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    m = _IN_PATH.search(path)
    if m:
        folder = f"{root}{path[: m.start()]}/.well-known/{m['known']}"
        rest = (m["rest"] or "").strip("/")
        wanted = None if rest in ("", INDEX_FILE) else rest.split("/", 1)[0]
        return [(f"{folder}/{INDEX_FILE}", folder, wanted)]
    out: list[tuple[str, str, str | None]] = []
    for known in WELL_KNOWN_PATHS:
        bases = [root + path] + ([root] if path else [])
        for base in bases:
            folder = f"{base}/{known}"
            out.append((f"{folder}/{INDEX_FILE}", folder, None))
    return out


def _entry(raw: object, index_url: str, v2: bool) -> Entry | None:
    if not isinstance(raw, dict):
        return None
    name, description = raw.get("name"), raw.get("description")
    if not isinstance(name, str) or not _NAME.match(name) or len(name) > 64:
        return None
    if not isinstance(description, str) or not description:
        return None
    if v2:
        url, kind, digest = raw.get("url"), raw.get("type"), raw.get("digest")
        if kind not in ("skill-md", "archive") or not isinstance(url, str) or not url:
            return None
        if not isinstance(digest, str) or not _DIGEST.match(digest):
            return None
        return Entry(name, description, url=urljoin(index_url, url), kind=kind, digest=digest)
    files = raw.get("files")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        return None
    if not any(f.lower() == "skill.md" for f in files):
        return None
    return Entry(name, description, files=tuple(files))


def parse_index(data: bytes, index_url: str) -> tuple[Entry, ...]:
    """The skills a discovery index lists.

    Args:
        data: the index's bytes (JSON).
        index_url: where it came from (relative artifact URLs resolve against it).
    Returns:
        Its valid entries (a 0.2 index skips entries it cannot use, as npx does).
    Raises:
        WellKnownError: not JSON, not an index, an unknown ``$schema``, a 0.1 entry that is invalid.
    """
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        raise WellKnownError(f"{index_url}: not a JSON discovery index") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("skills"), list):
        raise WellKnownError(f"{index_url}: a discovery index needs a 'skills' list")
    schema = doc.get("$schema")
    if schema not in (None, DISCOVERY_SCHEMA_V2):
        raise WellKnownError(f"{index_url}: unknown discovery schema {schema!r}")
    v2 = schema == DISCOVERY_SCHEMA_V2
    entries = []
    for raw in doc["skills"]:
        entry = _entry(raw, index_url, v2)
        if entry is None:
            if v2:
                continue
            raise WellKnownError(f"{index_url}: an invalid skill entry {raw!r:.80}")
        entries.append(entry)
    if not entries:
        raise WellKnownError(f"{index_url}: the index lists no usable skill")
    return tuple(entries)


def discover(
    url: str, *, timeout: float, ssl_context: ssl.SSLContext | None = None
) -> Discovery | None:
    """The first discovery index found for ``url``, or None when the site publishes none.

    Args:
        url: an http(s) URL (a site, a page, a well-known folder or index).
        timeout: seconds for each fetch.
        ssl_context: a CA to trust (tests).
    Returns:
        Discovery, or None (every candidate missing or not an index).
    Raises:
        WellKnownError: a URL inside ``/.well-known/agent-skills`` whose index is unusable.
    """
    from chimera_cards._sources.fetch import FetchError, fetch_url

    candidates = index_candidates(url)
    explicit = len(candidates) == 1
    for index_url, folder, wanted in candidates:
        try:
            fetched = fetch_url(
                index_url, timeout=timeout, max_bytes=MAX_INDEX_BYTES, ssl_context=ssl_context
            )
            entries = parse_index(fetched.data, index_url)
        except (FetchError, WellKnownError) as exc:
            if explicit:
                raise WellKnownError(f"{url}: no usable discovery index ({exc})") from None
            continue
        return Discovery(index_url, folder, entries, wanted)
    return None


def entry_files(
    entry: Entry,
    discovery: Discovery,
    *,
    timeout: float,
    ssl_context: ssl.SSLContext | None = None,
) -> dict[str, tuple[bytes, bool]]:
    """Fetch one listed skill's files: path -> (bytes, executable).

    Args:
        entry: an entry of ``discovery``.
        discovery: the index it came from.
        timeout: seconds for each fetch.
        ssl_context: a CA to trust (tests).
    Returns:
        The skill's files (nothing is executable: the web carries no modes).
    Raises:
        WellKnownError: a digest that does not match, an unsafe path, a missing SKILL.md;
        FetchError, ArchiveError and BundleError as their fetch or archive raise them.
    """
    from chimera_cards._sources.archive import MAX_ARCHIVE_BYTES, read_archive
    from chimera_cards._sources.fetch import fetch_url

    if entry.url:
        fetched = fetch_url(
            entry.url, timeout=timeout, max_bytes=MAX_ARCHIVE_BYTES, ssl_context=ssl_context
        )
        got = "sha256:" + hashlib.sha256(fetched.data).hexdigest()
        if got != entry.digest:
            raise WellKnownError(
                f"{entry.url}: its bytes hash to {got}, the index says {entry.digest}"
            )
        if entry.kind == "skill-md":
            return {SKILL_FILE: (fetched.data, False)}
        tree = read_archive(fetched.data, fetched.final_url, where=entry.url)
        return dict(tree.entries)
    files: dict[str, tuple[bytes, bool]] = {}
    base = f"{discovery.folder_url}/{entry.name}/"
    for rel in entry.files:
        name = SKILL_FILE if rel.lower() == "skill.md" else rel
        check_path(name)
        url = urljoin(base, rel)
        fetched = fetch_url(
            url, timeout=timeout, max_bytes=MAX_ARCHIVE_BYTES, ssl_context=ssl_context
        )
        files[name] = (fetched.data, False)
    return files
