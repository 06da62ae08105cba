"""Pagination of a list."""


def page(items, number, size=10):
    """The items on 1-based page ``number``."""
    start = number * size
    return items[start : start + size]
