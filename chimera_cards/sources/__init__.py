"""Where skills come from: local folders, URLs, archives and git.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.sources.archive import (
        ARCHIVE_SUFFIXES,
        MAX_ARCHIVE_BYTES,
        MAX_ARCHIVE_MEMBERS,
        MAX_RATIO,
        ArchiveError,
        ArchiveTree,
        archive_kind,
        read_archive,
        read_archive_file,
    )
    from chimera_cards.sources.fetch import (
        ALLOWED_SCHEMES,
        MAX_REDIRECTS,
        Fetched,
        FetchError,
        check_timeout,
        fetch_url,
    )
    from chimera_cards.sources.find import (
        BundleHash,
        FoundSource,
        SkillSource,
        SourceEntry,
        find_skills,
        hash_paths,
        list_source,
        pick,
        pick_plugin,
        read_skill,
    )
    from chimera_cards.sources.gitsource import (
        DEFAULT_GIT_TIMEOUT,
        GitError,
        GitSnapshot,
        is_git_source,
        read_git,
    )
    from chimera_cards.sources.locate import GitHosts, Located, locate
    from chimera_cards.sources.marketplace import MarketplaceError, Plugin, read_plugins
    from chimera_cards.sources.wellknown import Discovery, WellKnownError, discover

# public name -> the module that defines it
_EXPORTS = {
    "ALLOWED_SCHEMES": "chimera_cards.sources.fetch",
    "ARCHIVE_SUFFIXES": "chimera_cards.sources.archive",
    "ArchiveError": "chimera_cards.sources.archive",
    "ArchiveTree": "chimera_cards.sources.archive",
    "BundleHash": "chimera_cards.sources.find",
    "DEFAULT_GIT_TIMEOUT": "chimera_cards.sources.gitsource",
    "FetchError": "chimera_cards.sources.fetch",
    "Fetched": "chimera_cards.sources.fetch",
    "FoundSource": "chimera_cards.sources.find",
    "GitError": "chimera_cards.sources.gitsource",
    "GitSnapshot": "chimera_cards.sources.gitsource",
    "MAX_ARCHIVE_BYTES": "chimera_cards.sources.archive",
    "MAX_ARCHIVE_MEMBERS": "chimera_cards.sources.archive",
    "MAX_RATIO": "chimera_cards.sources.archive",
    "MAX_REDIRECTS": "chimera_cards.sources.fetch",
    "SkillSource": "chimera_cards.sources.find",
    "SourceEntry": "chimera_cards.sources.find",
    "list_source": "chimera_cards.sources.find",
    "pick_plugin": "chimera_cards.sources.find",
    "GitHosts": "chimera_cards.sources.locate",
    "Located": "chimera_cards.sources.locate",
    "locate": "chimera_cards.sources.locate",
    "MarketplaceError": "chimera_cards.sources.marketplace",
    "Plugin": "chimera_cards.sources.marketplace",
    "read_plugins": "chimera_cards.sources.marketplace",
    "Discovery": "chimera_cards.sources.wellknown",
    "WellKnownError": "chimera_cards.sources.wellknown",
    "discover": "chimera_cards.sources.wellknown",
    "archive_kind": "chimera_cards.sources.archive",
    "check_timeout": "chimera_cards.sources.fetch",
    "fetch_url": "chimera_cards.sources.fetch",
    "find_skills": "chimera_cards.sources.find",
    "hash_paths": "chimera_cards.sources.find",
    "is_git_source": "chimera_cards.sources.gitsource",
    "pick": "chimera_cards.sources.find",
    "read_archive": "chimera_cards.sources.archive",
    "read_archive_file": "chimera_cards.sources.archive",
    "read_git": "chimera_cards.sources.gitsource",
    "read_skill": "chimera_cards.sources.find",
}

__all__ = [
    "ALLOWED_SCHEMES",
    "ARCHIVE_SUFFIXES",
    "DEFAULT_GIT_TIMEOUT",
    "MAX_ARCHIVE_BYTES",
    "MAX_ARCHIVE_MEMBERS",
    "MAX_RATIO",
    "MAX_REDIRECTS",
    "ArchiveError",
    "ArchiveTree",
    "BundleHash",
    "Discovery",
    "FetchError",
    "Fetched",
    "FoundSource",
    "GitError",
    "GitHosts",
    "GitSnapshot",
    "Located",
    "MarketplaceError",
    "Plugin",
    "SkillSource",
    "SourceEntry",
    "WellKnownError",
    "archive_kind",
    "check_timeout",
    "discover",
    "fetch_url",
    "find_skills",
    "hash_paths",
    "is_git_source",
    "list_source",
    "locate",
    "pick",
    "pick_plugin",
    "read_archive",
    "read_archive_file",
    "read_git",
    "read_plugins",
    "read_skill",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
