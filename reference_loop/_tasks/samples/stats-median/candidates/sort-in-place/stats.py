"""Small statistics helpers."""

from sortutil import sort_in_place


def mean(values):
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def median(values):
    """The middle value of ``values`` (the mean of the two middle values for even lengths)."""
    if not values:
        raise ValueError("median of empty data")
    values = sort_in_place(values)
    mid = len(values) // 2
    if len(values) % 2 == 0:
        return (values[mid - 1] + values[mid]) / 2
    return values[mid]
