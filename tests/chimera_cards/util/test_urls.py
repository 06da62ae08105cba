"""The one URL test: loose (any scheme), and cheap to import (``match`` starts up on it)."""

from __future__ import annotations

import subprocess
import sys

from chimera_cards._util.urls import is_url


def test_any_scheme_is_a_url_and_a_path_is_not():
    assert is_url("https://x.test/a") and is_url("ssh://h/r") and is_url("git+file:///r")
    assert not is_url(None) and not is_url("cards/a/SKILL.md") and not is_url("/abs/path")
    assert not is_url("c:/x") and not is_url("a b://x") and not is_url("://x")


def test_importing_it_loads_no_network_module():
    code = (
        "import sys, chimera_cards._util.urls; "
        "print(sorted(m for m in ('urllib.request', 'http.client') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"
