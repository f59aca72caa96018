"""What a model or a user reads when the arguments are not JSON: the decoder's position, said once."""

from __future__ import annotations

import pytest

from hermes_core import InputInvalidError
from hermes_core._door._door import parse_arguments
from hermes_core.cli import main


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ('{"expression": "1', "Unterminated string starting at line 1, column 16"),
        ('{"expression": "1\x01"}', "Invalid control character at line 1, column 18"),
        ('{"expression": }', "Expecting value at line 1, column 16"),
    ],
)
def test_the_front_door_says_where_the_json_breaks_once(raw: str, said: str) -> None:
    with pytest.raises(InputInvalidError) as caught:
        parse_arguments("math.eval", raw)
    (issue,) = caught.value.issues
    assert issue.detail == f"is not valid JSON: {said}; send a JSON object"
    assert " at at " not in str(caught.value)


def test_hermesos_call_says_where_the_json_breaks_once(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["call", "math.eval", '{"expression": "1'])
    _, err = capsys.readouterr()
    assert status != 0
    assert "Unterminated string starting at line 1, column 16" in err
    assert " at at " not in err
