"""Pagination of a list."""


def _first_index_of(number, size):
    return (number - 1) * size


def page(items, number, size=10):
    """The items on 1-based page ``number``."""
    start = _first_index_of(number, size)
    return items[start : start + size]
