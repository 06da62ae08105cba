"""Money formatting."""


def format_cents(cents):
    as_dollars = cents / 100
    return f"${as_dollars:.2f}"
