"""Small statistics helpers."""


def mean(values):
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def _floor_midpoint(low, high):
    return (low + high) // 2


def median(values):
    """The middle value of ``values`` (the mean of the two middle values for even lengths)."""
    if not values:
        raise ValueError("median of empty data")
    ranked = sorted(values)
    mid = len(ranked) // 2
    if len(ranked) % 2 == 0:
        return _floor_midpoint(ranked[mid - 1], ranked[mid])
    return ranked[mid]
