from mlsmoke.listing import first_few


def test_a_short_list_is_written_whole() -> None:
    assert first_few(["a", "b"], 2) == "a, b"


def test_a_long_list_says_how_many_more() -> None:
    assert first_few(["a", "b", "c", "d"], 2) == "a, b, and 2 more"
