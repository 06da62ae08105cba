"""Small statistics helpers."""


def mean(values):
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def median(values):
    """The middle value of ``values`` (the mean of the two middle values for even lengths)."""
    if not values:
        raise ValueError("median of empty data")
    return values[len(values) // 2]
