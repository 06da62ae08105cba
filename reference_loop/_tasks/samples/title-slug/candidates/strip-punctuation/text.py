"""Text helpers."""

import re

_PUNCTUATION_RE = re.compile(r"[^\w\s-]")


def slugify(title):
    cleaned = _PUNCTUATION_RE.sub("", title.lower())
    return "-".join(cleaned.split())
