"""Pagination of a list."""


def page(items, number, size=10):
    """The items on 1-based page ``number``."""
    if number < 1:
        raise ValueError(f"page numbers start at 1, got {number}")
    start = (number - 1) * size
    return items[start : start + size]
