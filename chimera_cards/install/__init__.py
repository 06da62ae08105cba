"""Installing approved skills into agent folders: receipts, disk writes, check, sync, agents.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from chimera_cards.bundles.folderscan import RECEIPT_NAME
    from chimera_cards.install.agents import (
        AGENTS,
        Agent,
        AgentLocation,
        UnknownAgentError,
        agent_locations,
        detect,
        find_agent,
        project_dir,
        user_dir,
    )
    from chimera_cards.install.available import AvailableSkill, available_skills, render_skills_xml
    from chimera_cards.install.disk import check_name, recover, remove_skill, write_skill
    from chimera_cards.install.installer import InstallResult, install
    from chimera_cards.install.policy import (
        NotApprovedError,
        Policy,
        StoredSkill,
        installable,
        load_bundle,
        load_bundles,
        stored_skills,
    )
    from chimera_cards.install.receipt import (
        INDEX_NAME,
        STATES,
        FolderScan,
        ForeignFolderError,
        InstallError,
        NotInstalledError,
        Receipt,
        find_skill_folders,
        read_index,
        read_receipt,
        record_installs,
        scan_folder,
        scan_folders,
    )
    from chimera_cards.install.state import Candidate, SkillState, classify
    from chimera_cards.install.sync import SyncAction, apply_sync, plan_sync
    from chimera_cards.install.verify import CheckReport, check

# public name -> the module that defines it
_EXPORTS = {
    "AGENTS": "chimera_cards.install.agents",
    "Agent": "chimera_cards.install.agents",
    "AgentLocation": "chimera_cards.install.agents",
    "AvailableSkill": "chimera_cards.install.available",
    "Candidate": "chimera_cards.install.state",
    "CheckReport": "chimera_cards.install.verify",
    "FolderScan": "chimera_cards.install.receipt",
    "ForeignFolderError": "chimera_cards.install.receipt",
    "INDEX_NAME": "chimera_cards.install.receipt",
    "InstallError": "chimera_cards.install.receipt",
    "InstallResult": "chimera_cards.install.installer",
    "NotApprovedError": "chimera_cards.install.policy",
    "NotInstalledError": "chimera_cards.install.receipt",
    "Policy": "chimera_cards.install.policy",
    "RECEIPT_NAME": "chimera_cards.bundles.folderscan",
    "Receipt": "chimera_cards.install.receipt",
    "STATES": "chimera_cards.install.receipt",
    "SkillState": "chimera_cards.install.state",
    "StoredSkill": "chimera_cards.install.policy",
    "SyncAction": "chimera_cards.install.sync",
    "UnknownAgentError": "chimera_cards.install.agents",
    "agent_locations": "chimera_cards.install.agents",
    "apply_sync": "chimera_cards.install.sync",
    "available_skills": "chimera_cards.install.available",
    "check": "chimera_cards.install.verify",
    "check_name": "chimera_cards.install.disk",
    "classify": "chimera_cards.install.state",
    "detect": "chimera_cards.install.agents",
    "find_agent": "chimera_cards.install.agents",
    "find_skill_folders": "chimera_cards.install.receipt",
    "install": "chimera_cards.install.installer",
    "installable": "chimera_cards.install.policy",
    "load_bundle": "chimera_cards.install.policy",
    "load_bundles": "chimera_cards.install.policy",
    "plan_sync": "chimera_cards.install.sync",
    "project_dir": "chimera_cards.install.agents",
    "read_index": "chimera_cards.install.receipt",
    "read_receipt": "chimera_cards.install.receipt",
    "record_installs": "chimera_cards.install.receipt",
    "recover": "chimera_cards.install.disk",
    "remove_skill": "chimera_cards.install.disk",
    "render_skills_xml": "chimera_cards.install.available",
    "scan_folder": "chimera_cards.install.receipt",
    "scan_folders": "chimera_cards.install.receipt",
    "stored_skills": "chimera_cards.install.policy",
    "user_dir": "chimera_cards.install.agents",
    "write_skill": "chimera_cards.install.disk",
}

__all__ = [
    "AGENTS",
    "INDEX_NAME",
    "RECEIPT_NAME",
    "STATES",
    "Agent",
    "AgentLocation",
    "AvailableSkill",
    "Candidate",
    "CheckReport",
    "FolderScan",
    "ForeignFolderError",
    "InstallError",
    "InstallResult",
    "NotApprovedError",
    "NotInstalledError",
    "Policy",
    "Receipt",
    "SkillState",
    "StoredSkill",
    "SyncAction",
    "UnknownAgentError",
    "agent_locations",
    "apply_sync",
    "available_skills",
    "check",
    "check_name",
    "classify",
    "detect",
    "find_agent",
    "find_skill_folders",
    "install",
    "installable",
    "load_bundle",
    "load_bundles",
    "plan_sync",
    "project_dir",
    "read_index",
    "read_receipt",
    "record_installs",
    "recover",
    "remove_skill",
    "render_skills_xml",
    "scan_folder",
    "scan_folders",
    "stored_skills",
    "user_dir",
    "write_skill",
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
