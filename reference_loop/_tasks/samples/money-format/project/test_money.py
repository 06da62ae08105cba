from money import format_cents


def test_two_decimal_places():
    assert format_cents(1230) == "$12.30"


def test_zero():
    assert format_cents(0) == "$0.00"


def test_small_amounts_keep_the_leading_zero():
    assert format_cents(5) == "$0.05"


def test_negative():
    assert format_cents(-199) == "-$1.99"
