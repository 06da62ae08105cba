"""Without the Agent Skills SDK (Python 3.11, or no extra), ``chimera_cards.provider`` still
imports, and building a provider is one clear refusal naming the extra."""

from __future__ import annotations

import importlib.util

import pytest

from chimera_cards.provider import ChimeraSkillProvider, MissingSdkError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("agentskills_core") is not None, reason="the SDK is installed here"
)


def test_building_a_provider_without_the_sdk_names_the_extra(tmp_path):
    with pytest.raises(MissingSdkError) as info:
        ChimeraSkillProvider.from_store(tmp_path / "cards.db")
    assert info.value.exit_code == 2
    assert "pip install 'chimera-cards[provider]'" in str(info.value)
    assert not (tmp_path / "cards.db").exists()
