import pytest
from config import get_port


def test_port_is_parsed_as_int():
    assert get_port({"PORT": "9000"}) == 9000


def test_default_port():
    assert get_port({}) == 8080


def test_junk_port_error_names_the_variable():
    with pytest.raises(ValueError, match="PORT"):
        get_port({"PORT": "eighty"})
