"""Text helpers."""

import re
import unicodedata


def slugify(title):
    folded = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return "-".join(re.findall(r"[a-z0-9]+", folded.lower()))
