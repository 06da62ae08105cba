"""Import hooks: the approvals hook loads review only for a card that ships approvals, so a
folder import starts without cryptography, the network and archive modules, or markdown-it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import make_card

# Run in a fresh interpreter: this test process has imported everything already.
PROBE = """
import sys
from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.facade import Store
with Store(sys.argv[2]) as store:
    results = import_source(store, sys.argv[1])
assert [r.outcome for r in results] == ["imported"] * 3, results
heavy = ["chimera_cards._review", "cryptography", "ssl", "http.client", "tarfile", "zipfile",
         "markdown_it", "chimera_cards._sources.fetch", "chimera_cards._sources.archive"]
print(" ".join(m for m in heavy if m in sys.modules))
"""


@pytest.mark.slow
def test_a_folder_import_without_approvals_loads_no_review_network_or_archive_code(tmp_path):
    for index in range(3):
        make_card(tmp_path / "cards", f"plain-{index}")
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "cards"), str(tmp_path / "cards.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == []
