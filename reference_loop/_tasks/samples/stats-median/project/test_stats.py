import pytest
from stats import mean, median


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_median_of_unsorted_odd_list():
    assert median([3, 1, 2]) == 2


def test_median_of_even_list_is_mean_of_middle_pair():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_does_not_reorder_its_input():
    data = [3, 1, 2]
    median(data)
    assert data == [3, 1, 2]


def test_median_of_empty_list_raises():
    with pytest.raises(ValueError):
        median([])
