"""Text from a tool run made safe to print on a terminal and to put in a prompt.

A verifier's or agent's output (and a file name an attempt chose) may hold ANSI/OSC escape
sequences: colour codes at best, at worst sequences that retitle the operator's terminal, write
to its clipboard or hide text. Colour and other CSI/OSC sequences are dropped; any other control
character is shown as a visible ``\\xNN`` escape instead of being sent raw. Tabs and newlines
stay.
"""

from __future__ import annotations

import re

# CSI (ESC [ ... final byte), OSC (ESC ] ... BEL or ESC \), DCS/SOS/PM/APC strings, two-byte
# escapes, and their 8-bit C1 forms.
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|$)"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b[ -/]*[0-~]",
    re.S,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` without escape sequences, other control characters made visible.

    Args:
        text: output of a tool run, or a path an attempt created.

    Returns:
        The same text with CSI/OSC sequences removed and other control characters (except tab
        and newline) replaced by ``\\xNN``; a carriage return becomes ``\\r``.
    """
    if not _CONTROLS.search(text):
        return text
    text = _SEQUENCES.sub("", text)
    return _CONTROLS.sub(lambda m: "\\r" if m.group() == "\r" else f"\\x{ord(m.group()):02x}", text)
