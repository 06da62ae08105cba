"""Money formatting."""


def format_cents(cents):
    return "$" + str(cents / 100)
