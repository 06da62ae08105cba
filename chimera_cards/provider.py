"""A ``SkillProvider`` for the Agent Skills SDK (``agentskills-core``): only approved bytes.

Agent frameworks built on the SDK (LangChain, Microsoft Agent Framework, …) read skills through a
provider. ``ChimeraSkillProvider`` answers every call from a catalog (``runtime.catalog``), asked
afresh each time: the store's usable versions with every file re-hashed, or an agent folder's
skills whose bytes ``check`` calls ok. A pending, rejected, revoked or tampered skill does not
exist for the SDK (``SkillNotFoundError``); the install receipt and other sidecars are never skill
files. Needs the optional extra ``provider`` (the SDK requires Python 3.12 or newer)::

    from chimera_cards.provider import ChimeraSkillProvider
    provider = ChimeraSkillProvider.from_store("~/.local/share/chimera-cards/cards.db")
    provider = ChimeraSkillProvider.from_folder(".claude/skills", store="cards.db")
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from chimera_cards.errors import ChimeraError, UsageError

try:
    from agentskills_core import (
        RESOURCE_KINDS,
        ProviderUnavailableError,
        ResourceNotFoundError,
        SkillNotFoundError,
        SkillProvider,
        split_frontmatter,
    )
except ImportError:  # the optional extra: this module still imports, the provider refuses
    SDK_MISSING = True
    SkillProvider = object
    ProviderUnavailableError = ResourceNotFoundError = SkillNotFoundError = LookupError
    RESOURCE_KINDS = ("references", "scripts", "assets")
else:
    SDK_MISSING = False
from chimera_cards._install.policy import Policy
from chimera_cards._runtime.catalog import Catalog, FolderCatalog, ServedSkill, StoreCatalog
from chimera_cards._store.location import default_store_path

__all__ = ["ChimeraSkillProvider", "MissingSdkError"]


class MissingSdkError(UsageError):
    """The Agent Skills SDK (``agentskills-core``, Python >= 3.12) is not installed."""


class ChimeraSkillProvider(SkillProvider):
    """Approved skills for the Agent Skills SDK, re-read and re-hashed on every call.

    Args:
        catalog: where the skills come from (``from_store`` / ``from_folder`` build one).
    """

    supports_resource_listing = True
    supports_discovery = True
    supports_file_access = True

    def __init__(self, catalog: Catalog) -> None:
        if SDK_MISSING:
            raise MissingSdkError(
                "the provider needs the Agent Skills SDK (Python >= 3.12): "
                "pip install 'chimera-cards[provider]'"
            )
        self._catalog = catalog

    @classmethod
    def from_store(
        cls, store: str | os.PathLike | None = None, policy: Policy | None = None
    ) -> ChimeraSkillProvider:
        """The store's usable versions (default store: ``store.default_store_path()``)."""
        path = os.path.expanduser(os.fspath(store)) if store is not None else default_store_path()
        return cls(StoreCatalog(path, policy))

    @classmethod
    def from_folder(
        cls,
        directory: str | os.PathLike,
        store: str | os.PathLike | None = None,
        policy: Policy | None = None,
    ) -> ChimeraSkillProvider:
        """The skills of an agent folder whose bytes ``check`` calls ok against ``store``."""
        path = os.path.expanduser(os.fspath(store)) if store is not None else default_store_path()
        return cls(FolderCatalog(path, directory, policy))

    async def _skill(self, skill_id: str) -> ServedSkill:
        if not isinstance(skill_id, str):
            raise SkillNotFoundError(f"no approved skill {skill_id!r}")
        try:
            skill = await asyncio.to_thread(self._catalog.get, skill_id)
        except ChimeraError as exc:  # no store, an unreadable one: not "no such skill"
            raise ProviderUnavailableError(f"chimera-cards store: {exc}") from None
        if skill is None:
            raise SkillNotFoundError(f"no approved skill {skill_id!r}")
        return skill

    async def get_metadata(self, skill_id: str) -> dict[str, Any]:
        """SKILL.md's frontmatter (a fresh copy each call)."""
        return dict((await self._skill(skill_id)).frontmatter)

    async def get_body(self, skill_id: str) -> str:
        """SKILL.md after its frontmatter, as the SDK's own providers split it."""
        skill = await self._skill(skill_id)
        skill_md = skill.file("SKILL.md")
        assert skill_md is not None  # the catalog serves no skill without one
        return split_frontmatter(skill_md.data.decode("utf-8"))[1]

    async def _resource(self, skill_id: str, kind: str, name: str) -> bytes:
        skill = await self._skill(skill_id)
        # Looked up among the approved files only: no path is ever built from ``name``, so a
        # traversal-shaped name can only fail to match.
        file = skill.file(f"{kind}/{name}") if isinstance(name, str) else None
        if file is None:
            raise ResourceNotFoundError(f"{skill_id}: no {kind} file {name!r}")
        return file.data

    async def get_script(self, skill_id: str, name: str) -> bytes:
        return await self._resource(skill_id, "scripts", name)

    async def get_asset(self, skill_id: str, name: str) -> bytes:
        return await self._resource(skill_id, "assets", name)

    async def get_reference(self, skill_id: str, name: str) -> bytes:
        return await self._resource(skill_id, "references", name)

    async def list_resources(self, skill_id: str) -> dict[str, list[str]]:
        skill = await self._skill(skill_id)
        listing: dict[str, list[str]] = {kind: [] for kind in RESOURCE_KINDS}
        for file in skill.files:
            kind, _, rest = file.path.partition("/")
            if kind in listing and rest:
                listing[kind].append(rest)
        return {kind: sorted(names) for kind, names in listing.items()}

    async def discover(self) -> list[str]:
        try:
            names = await asyncio.to_thread(self._catalog.names)
        except ChimeraError as exc:
            raise ProviderUnavailableError(f"chimera-cards store: {exc}") from None
        found = [n for n in names if await asyncio.to_thread(self._catalog.get, n) is not None]
        return sorted(found)

    async def list_files(self, skill_id: str) -> list[str]:
        return sorted(f.path for f in (await self._skill(skill_id)).files)

    async def read_file(self, skill_id: str, path: str) -> bytes:
        file = (await self._skill(skill_id)).file(path) if isinstance(path, str) else None
        if file is None:
            raise ResourceNotFoundError(f"{skill_id}: no file {path!r}")
        return file.data
