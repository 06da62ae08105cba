"""Text helpers."""


def slugify(title):
    return title.lower().replace(" ", "-")
