from text import slugify


def test_punctuation_is_dropped():
    assert slugify("Hello, World!") == "hello-world"


def test_runs_of_spaces_collapse():
    assert slugify("  many   spaces ") == "many-spaces"


def test_accents_are_folded():
    assert slugify("Déjà vu") == "deja-vu"
