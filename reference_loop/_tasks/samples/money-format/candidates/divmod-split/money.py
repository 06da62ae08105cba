"""Money formatting."""


def format_cents(cents):
    whole_dollars, cents_part = divmod(cents, 100)
    return f"${whole_dollars}.{cents_part:02d}"
