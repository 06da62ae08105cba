"""Sorting helpers."""


def sort_in_place(values):
    values.sort()
    return values
