import pytest
from pages import page

ITEMS = list(range(25))


def test_first_page_starts_at_the_first_item():
    assert page(ITEMS, 1, 10) == list(range(10))


def test_last_page_is_partial():
    assert page(ITEMS, 3, 10) == [20, 21, 22, 23, 24]


def test_page_zero_is_rejected():
    with pytest.raises(ValueError):
        page(ITEMS, 0, 10)
