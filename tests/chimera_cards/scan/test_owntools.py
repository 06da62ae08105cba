"""The vendor's own release of the tool a skill drives, unpacked onto the PATH and run by name
(datadog-labs' agent-install: `curl -L https://github.com/datadog-labs/pup/releases/download/… |
tar xz -C /usr/local/bin pup`, then `pup --version`), and the vendor's own Homebrew tap, are the
skill's premise: listed. The same recipe from another host, over http, or of another program
stays `download-exec`, an error that holds the import."""

from __future__ import annotations

from pathlib import Path

from chimera_cards._bundles.bundle import bundle_from_files
from chimera_cards._cards.card import parse_card
from chimera_cards._scan.codescan import lint_bundle, lint_skill_paths
from chimera_cards._scan.findings import SHAPE_RULES

HEAD = """\
---
name: agent-install
description: Install the agent with the vendor's CLI.
metadata:
  repository: https://github.com/datadog-labs/agent-skills
  tools: helm,kubectl,curl,pup
---

- pup installed: check with `pup --version`; if missing, install it now:
  ```bash
  if [[ "$(uname)" == "Darwin" ]]; then
    brew tap datadog-labs/pack && brew install pup
  else
    V=$(curl -s https://api.github.com/repos/datadog-labs/pup/releases/latest | cut -d'"' -f4)
    curl -L "{url}" | tar xz -C /usr/local/bin {member}
    chmod +x /usr/local/bin/{member}
  fi
  {member} --version
  ```
"""
OWN = "https://github.com/datadog-labs/pup/releases/download/${V}/pup_linux_amd64.tar.gz"


def alarms(text: str, tmp_path: Path) -> list[tuple[str, str]]:
    """(rule, severity) of each error and warning, as import (lint_bundle) and lint read it."""
    bundle = bundle_from_files({"SKILL.md": (text.encode(), False)})
    found = lint_bundle(parse_card(text.encode()), bundle, dirname=None)
    imported = sorted(
        (f.rule, f.severity)
        for f in found
        if f.severity in ("error", "warning") and f.rule not in SHAPE_RULES
    )
    folder = tmp_path / "agent-install"
    folder.mkdir(exist_ok=True)
    (folder / "SKILL.md").write_text(text)
    linted = sorted(
        (f.rule, f.severity)
        for f in lint_skill_paths([folder]).findings
        if f.severity in ("error", "warning") and f.rule not in SHAPE_RULES
    )
    assert imported == linted
    return imported


def test_the_vendors_release_of_the_skills_tool_unpacked_onto_path_is_listed(tmp_path):
    assert alarms(HEAD.format(url=OWN, member="pup"), tmp_path) == []


def test_a_release_from_another_host_over_http_or_of_another_program_stays_an_error(tmp_path):
    for url, member in (
        ("https://github.com/someone/pup/releases/download/v1/pup_linux_amd64.tar.gz", "pup"),
        ("https://pup-releases.example/pup_linux_amd64.tar.gz", "pup"),
        ("http://github.com/datadog-labs/pup/releases/download/v1/pup_linux_amd64.tar.gz", "pup"),
        ("https://github.com/datadog-labs/helper/releases/download/v1/helper.tar.gz", "helper"),
    ):
        found = alarms(HEAD.format(url=url, member=member), tmp_path)
        assert ("download-exec", "error") in found, url


def test_without_a_repository_of_its_own_the_release_stays_an_error(tmp_path):
    text = HEAD.format(url=OWN, member="pup").replace(
        "  repository: https://github.com/datadog-labs/agent-skills\n", ""
    )
    assert ("download-exec", "error") in alarms(text, tmp_path)


def test_another_organisations_tap_stays_a_warning(tmp_path):
    text = HEAD.format(url=OWN, member="pup").replace("brew tap datadog-labs", "brew tap evil-labs")
    assert ("remote-install", "warning") in alarms(text, tmp_path)
