"""Small statistics helpers."""


def mean(values):
    if not values:
        raise ValueError("mean of empty data")
    return sum(values) / len(values)


def _middle_pair_mean(values):
    mid = len(values) // 2
    return (values[mid - 1] + values[mid]) / 2


def median(values):
    """The middle value of ``values`` (the mean of the two middle values for even lengths)."""
    if not values:
        raise ValueError("median of empty data")
    if len(values) % 2 == 0:
        return _middle_pair_mean(values)
    return values[len(values) // 2]
