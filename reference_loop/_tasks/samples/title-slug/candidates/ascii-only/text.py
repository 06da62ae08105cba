"""Text helpers."""

import re


def _ascii_words(title):
    ascii_text = title.encode("ascii", "ignore").decode()
    return re.findall(r"[a-z0-9]+", ascii_text.lower())


def slugify(title):
    return "-".join(_ascii_words(title))
