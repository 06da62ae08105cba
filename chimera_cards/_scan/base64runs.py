"""Which base64 runs in a text are payloads worth a reviewer's look, and which encode media."""

from __future__ import annotations

import base64
import binascii

# The first bytes of the media formats a page or script embeds as data (an icon, a font): the
# run is a picture or a font, not text an agent could be told to decode and follow.
_MEDIA_HEADS = (b"<svg", b"<?xml", b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"RIFF", b"wOFF", b"wOF2")


def is_base64_payload(run: str) -> bool:
    """Whether a run reads as base64 rather than a long identifier or a hex digest."""
    body = run.rstrip("=")
    # Require a real mix; long identifiers or hex digests are not base64 payloads.
    return (
        any(c.isupper() for c in body)
        and any(c.islower() for c in body)
        and any(c.isdigit() for c in body)
    )


def encodes_media(run: str) -> bool:
    """Whether a base64 run decodes to an image or a font (its first bytes say which). An SVG
    is read as text: one holding a script or a foreign object is no plain picture."""
    try:
        head = base64.b64decode(run[:64] + "=" * (-len(run[:64]) % 4))
    except (binascii.Error, ValueError):
        return False
    if not head.lstrip().startswith(_MEDIA_HEADS):
        return False
    if head.lstrip().startswith((b"<svg", b"<?xml")):
        try:
            text = base64.b64decode(run + "=" * (-len(run) % 4)).lower()
        except (binascii.Error, ValueError):
            return False
        return b"<svg" in text and b"<script" not in text and b"foreignobject" not in text
    return True
