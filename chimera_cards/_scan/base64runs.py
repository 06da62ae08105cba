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


_CERT_HEAD = b"\x30\x82"


def armoured_certificate(before: str, run: str) -> bool:
    """Whether a run is the body of a PEM certificate block (``-----BEGIN CERTIFICATE-----``
    ends the text before it) whose first bytes are a certificate's, even when the example's
    body is made up and does not decode whole (a configuration page's placeholder)."""
    if not before.rstrip().endswith(("-----BEGIN CERTIFICATE-----",
                                     "-----BEGIN CERTIFICATE REQUEST-----")):  # fmt: skip
        return False
    try:
        head = base64.b64decode(run[:8])
    except (binascii.Error, ValueError):
        return False
    return head[:2] == _CERT_HEAD and head[4:6] == _CERT_HEAD


def _certificate(run: str, head: bytes) -> bool:
    """Whether a run is one DER certificate (or signing request): a SEQUENCE whose length is
    the whole decoding, holding a SEQUENCE first (the signed part). A private key's first
    element is a version INTEGER, so no key passes."""
    if head[:2] != _CERT_HEAD or head[4:6] != _CERT_HEAD:
        return False
    try:
        whole = base64.b64decode(run + "=" * (-len(run) % 4))
    except (binascii.Error, ValueError):
        return False
    return int.from_bytes(whole[2:4], "big") + 4 == len(whole)


def encodes_media(run: str) -> bool:
    """Whether a base64 run decodes to an image, a font or a certificate (its first bytes say
    which: a PEM block's body in a configuration example). An SVG is read as text: one holding a
    script or a foreign object is no plain picture."""
    try:
        head = base64.b64decode(run[:64] + "=" * (-len(run[:64]) % 4))
    except (binascii.Error, ValueError):
        return False
    if _certificate(run, head):
        return True
    if not head.lstrip().startswith(_MEDIA_HEADS):
        return False
    if head.lstrip().startswith((b"<svg", b"<?xml")):
        try:
            text = base64.b64decode(run + "=" * (-len(run) % 4)).lower()
        except (binascii.Error, ValueError):
            return False
        return b"<svg" in text and b"<script" not in text and b"foreignobject" not in text
    return True
