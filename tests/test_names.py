from __future__ import annotations

import pytest

from hermes_core import InvalidDefinitionError
from hermes_core.names import NAME_MAX, check_name, is_name, suggest


@pytest.mark.parametrize("name", ["fs", "fs.write", "a.b_c.d9", "x" * NAME_MAX])
def test_names_that_follow_the_rule(name: str) -> None:
    assert is_name(name)
    assert check_name("s.ref()", "name", name, example="fs.path") == name


@pytest.mark.parametrize(
    "name", ["", "Fs", "fs.", ".fs", "fs..write", "fs-write", "9fs", "fs.9", "x" * (NAME_MAX + 1), 3]
)
def test_names_that_do_not(name: object) -> None:
    assert not is_name(name)
    with pytest.raises(InvalidDefinitionError) as caught:
        check_name("Runtime()", "schemas name", name, example="fs.path")
    assert (caught.value.declaration, caught.value.field) == ("Runtime()", "schemas name")
    assert caught.value.detail.startswith(
        "must be dot-separated lowercase segments, each a letter then letters, digits or underscores, "
        "at most 64 characters (such as 'fs.path'), got "
    )


def test_a_long_bad_name_is_shortened_in_the_message() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        check_name("tool", "name", "X" * 500, example="fs.write")
    assert caught.value.detail.endswith("got '" + "X" * 56 + "...")  # shorten(): 60 characters in all


def test_suggestions_put_case_and_separator_slips_first_then_close_spellings() -> None:
    names = ["fs.read", "fs.write", "fs.stat", "math.eval"]
    assert suggest("FS_Write", names) == ("fs.write",)
    assert suggest("fs/read", names) == ("fs.read",)
    assert suggest("fs.raed", names)[0] == "fs.read"
    assert suggest("fs.reed", names, limit=1) == ("fs.read",)
    assert suggest("weather.today", names) == ()
    assert suggest("fs.read", {"fs.read": 1}) == ("fs.read",)  # a mapping's keys are its names
