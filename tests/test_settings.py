from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import InvalidDefinitionError, read_config_file, setting, user_config_dir, user_config_file
from hermes_core import schema as s

VAR = "HERMESOS_DEMO_VALUE"


def read(text: str | None, schema: s.Schema | None = None, **kwargs: Any) -> Any:
    """The setting VAR with *text* as its value (None: unset)."""
    return setting(VAR, schema, environ={} if text is None else {VAR: text}, **kwargs)


def refused(text: str | None, schema: s.Schema | None = None) -> InvalidDefinitionError:
    with pytest.raises(InvalidDefinitionError) as caught:
        read(text, schema)
    assert (caught.value.declaration, caught.value.field) == (f"setting {VAR}", None)
    return caught.value


# -- values --------------------------------------------------------------------------------------


def test_a_string_is_the_text_itself_without_surrounding_whitespace() -> None:
    assert read("  /srv/work space \n") == "/srv/work space"
    assert read("1048576") == "1048576"  # the default schema takes text: it is not read as JSON
    assert read('["a"]', s.string()) == '["a"]'


def test_an_integer_is_read_as_json() -> None:
    assert read("1048576", s.integer(minimum=1)) == 1048576
    assert read(" 16 ", s.integer(minimum=1)) == 16
    assert read("1e6", s.integer()) == 1000000  # JSON's rule: an integral number is an integer


@pytest.mark.parametrize(("text", "value"), [("true", True), ("false", False)])
def test_a_boolean_is_read_as_json(text: str, value: bool) -> None:
    assert read(text, s.boolean()) is value


def test_a_list_is_read_as_json() -> None:
    assert read('["py", "md"]', s.array(s.string())) == ["py", "md"]


def test_a_union_with_text_takes_the_text_or_else_the_json() -> None:
    schema = s.union(s.enum(["auto"]), s.integer(minimum=1))
    assert read("auto", schema) == "auto"
    assert read("4", schema) == 4


def test_the_environment_is_read_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "from the environment")
    assert setting(VAR) == "from the environment"


# -- defaults ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", "   \n"])
def test_unset_or_blank_gives_the_default_as_it_is(text: str | None) -> None:
    assert read(text, s.integer(), default=1024) == 1024
    assert read(text, s.integer(), default=None) is None
    assert read(text, s.integer(), default="not checked") == "not checked"


def test_a_callable_default_is_called_only_when_needed(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert read(None, default=os.getcwd) == str(tmp_path)
    calls: list[int] = []
    assert read("set", default=lambda: calls.append(1)) == "set"
    assert calls == []


def test_unset_without_a_default_says_what_to_set_it_to() -> None:
    assert str(refused(None)) == "setting HERMESOS_DEMO_VALUE is not set; set it to a string."
    schema = s.string(min_length=1, description="the API key of your weather service")
    assert str(refused("  ", schema)) == (
        "setting HERMESOS_DEMO_VALUE is not set; set it to a string: the API key of your weather service."
    )


# -- invalid values ------------------------------------------------------------------------------

LIMIT = s.integer(minimum=1, description="the most bytes read at once, such as 1048576")


@pytest.mark.parametrize(
    ("text", "schema", "message"),
    [
        ("0", s.integer(minimum=1), "setting HERMESOS_DEMO_VALUE must be at least 1."),
        (
            "0",
            LIMIT,
            "setting HERMESOS_DEMO_VALUE must be at least 1; set it to an integer: the most bytes read at once, "
            "such as 1048576.",
        ),
        ("1.5", s.integer(), "setting HERMESOS_DEMO_VALUE must be an integer, got number."),
        ("true", s.integer(), "setting HERMESOS_DEMO_VALUE must be an integer, got boolean."),
        ('"16"', s.integer(), "setting HERMESOS_DEMO_VALUE must be an integer, got string."),
        (
            "1MiB",
            s.integer(),
            "setting HERMESOS_DEMO_VALUE must be an integer written in JSON, got text that is not JSON.",
        ),
        (
            "yes",
            s.boolean(),
            "setting HERMESOS_DEMO_VALUE must be a boolean written in JSON, got text that is not JSON.",
        ),
        (
            '["a", 2]',
            s.array(s.string()),
            'setting HERMESOS_DEMO_VALUE is invalid: "1" must be a string, got integer.',
        ),
        (
            "123",
            s.string(pattern="^sk-"),  # takes text: told about the pattern, not about the JSON number
            'setting HERMESOS_DEMO_VALUE must match the pattern "^sk-".',
        ),
        ("debug", s.enum(["info", "warning"]), 'setting HERMESOS_DEMO_VALUE must be one of "info", "warning".'),
    ],
)
def test_an_invalid_value_says_what_was_wrong(text: str, schema: s.Schema, message: str) -> None:
    error = refused(text, schema)
    assert str(error) == message
    assert error.__cause__ is None
    assert error.__suppress_context__


@pytest.mark.parametrize(
    "schema",
    [
        s.string(pattern="^sk-[a-z0-9]{20}$"),
        s.string(max_length=8),
        s.integer(),
        s.enum(["a", "b"]),
        s.array(s.integer()),
        s.object({"key": s.integer()}),
    ],
)
def test_a_secret_is_never_echoed(schema: s.Schema) -> None:
    secret = "sk-LEAKED0123456789secret"
    for text in (secret, f'["{secret}"]', f'{{"key": "{secret}"}}'):
        error = refused(text, schema)
        assert "LEAKED" not in str(error)
        assert "LEAKED" not in repr(error.to_dict())
        assert error.__cause__ is None
        assert error.__context__ is None or error.__suppress_context__


# -- programming mistakes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variable",
    [
        "DEMO_VALUE",
        "HERMESOS_",
        "hermesos_demo_value",
        "HERMESOS_demo",
        "HERMESOS_DEMO-VALUE",
        "HERMESOS__DEMO",
        "HERMESOS_DEMO_",
        "HERMESOS_1DEMO",
        " HERMESOS_DEMO",
    ],
)
def test_a_variable_not_named_hermesos_plugin_name_is_a_value_error(variable: str) -> None:
    with pytest.raises(ValueError, match=r"must look like HERMESOS_<PLUGIN>_<NAME>"):
        setting(variable, environ={variable: "x"})


@pytest.mark.parametrize("variable", ["HERMESOS_POLICY", "HERMESOS_FS_ROOT", "HERMESOS_FS_MAX_READ_BYTES"])
def test_well_named_variables(variable: str) -> None:
    assert setting(variable, environ={variable: "x"}) == "x"


def test_wrong_argument_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="variable must be a str"):
        setting(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schema must be a schema"):
        setting(VAR, int, environ={VAR: "1"})  # type: ignore[arg-type]


# -- bounds: nothing an operator sets overflows later ------------------------------------------------------


def test_an_integer_past_what_the_machine_can_use_is_refused_whatever_the_schema() -> None:
    error = refused("9" * 20, s.integer(minimum=1, description="a size in bytes"))
    assert str(error) == (
        "setting HERMESOS_DEMO_VALUE is a number of 20 digits, larger than any this machine can use (at most "
        "9223372036854775807); set it to an integer: a size in bytes."
    )
    assert read(str(2**63 - 1), s.integer()) == 2**63 - 1
    assert "9" * 20 not in str(refused("-" + "9" * 20, s.integer()))


def test_a_schema_maximum_refuses_a_20_digit_size_naming_the_bound() -> None:
    error = refused("9" * 20, s.integer(minimum=1, maximum=1024**3, description="the most bytes one fs.read returns"))
    assert "must be at most 1073741824" in str(error)


# -- configuration files ------------------------------------------------------------------------------------


def test_the_configuration_directory_follows_xdg_and_ignores_a_relative_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "hermesos"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_config_dir({"XDG_CONFIG_HOME": "relative"}) == tmp_path / "home" / ".config" / "hermesos"
    assert user_config_file("mcp.toml", {}) == tmp_path / "home" / ".config" / "hermesos" / "mcp.toml"


def test_read_config_file_reads_a_regular_file_up_to_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "app.toml"
    path.write_bytes(b"x" * 10)
    assert read_config_file(path, 10, f'app file "{path}"') == b"x" * 10
    with pytest.raises(InvalidDefinitionError) as caught:
        read_config_file(path, 9, f'app file "{path}"', what="an app file", too_big="shorten it")
    assert str(caught.value) == f'app file "{path}" is larger than 9 bytes, the limit for an app file; shorten it.'
    with pytest.raises(InvalidDefinitionError, match=r"could not be read: it is a directory, not a regular file"):
        read_config_file(tmp_path, 9, "app file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_read_config_file_refuses_a_fifo_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "app.toml"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            read_config_file(fifo, 100, "app file")
        except InvalidDefinitionError as error:
            outcome.append(error)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(10)  # a blocked open() would wait for a writer for ever
    if reader.is_alive():
        with open(fifo, "wb"):  # release it, then fail
            pass
        pytest.fail("read_config_file waited on a FIFO")
    assert "could not be read: it is a FIFO (named pipe), not a regular file" in str(outcome[0])
