from __future__ import annotations

import inspect
import time
from dataclasses import FrozenInstanceError
from typing import TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import tool
from hermes_core._tool._docstrings import Docstring, parse_docstring

EXAMPLES = settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])

# -- Google ------------------------------------------------------------------------------------------

# The example of the Google Python style guide, as a method's __doc__ holds it (indented).
GOOGLE_STYLE_GUIDE = """Fetches rows from a Smalltable.

    Retrieves rows pertaining to the given keys from the Table instance
    represented by table_handle.  String keys will be UTF-8 encoded.

    Args:
      table_handle:
        An open smalltable.Table instance.
      keys:
        A sequence of strings representing the key of each table row to
        fetch.  String keys will be UTF-8 encoded.
      require_all_keys:
        If True only rows with values set for all keys will be returned.

    Returns:
      A dict mapping keys to the corresponding table row data
      fetched. Each row is represented as a tuple of strings. For
      example:

      {b'Serak': ('Rigel VII', 'Preparer'),
       b'Zim': ('Irk', 'Invader')}

    Raises:
      IOError: An error occurred accessing the smalltable.
    """

GOOGLE_TYPED = """Copy a file: the body below mentions a colon too.

    The copy is atomic: the target appears whole or not at all.

    Permissions are kept. Args: in the middle of a line is prose.

    Args:
        source (str): Path of the file to copy.
        target (str | None, optional): Where to copy it. Defaults to the
            current directory.

            A second paragraph about the target.
        mode (Callable[[int], int]): Maps the old mode (an int) to the new one.
        *args: Passed on to ``open``.
        **kwargs (dict[str, Any]): Options: ``follow``, ``buffer``.

    Returns:
        int: The number of bytes copied.

    Raises:
        OSError: If the copy fails.
    """

GOOGLE_ORDER = """Search the index.

    Example:
        >>> search("x", limit=2)

    Keyword Arguments:
        limit: At most this many hits.

    Note:
        The index is read-only.

    Arguments:
        query: The text to find.
    Other Parameters:
        timeout: Seconds to wait.
    """

GOOGLE_INDENTED_PROSE = """Run a command.

    The shell sees it like this::

        Args:
            not: a parameter

    Params:
        command: What to run.
        bad entry line
            whose text is dropped, not given to command.
        check: Raise on failure.
        shell:
        command: A second entry for a name is ignored.
    """

# -- NumPy -------------------------------------------------------------------------------------------

# numpydoc's own example, shortened.
NUMPYDOC_EXAMPLE = r"""Summarize the function in one line.

    Several sentences providing an extended description. Refer to
    variables using back-ticks, e.g. `var`.

    Parameters
    ----------
    var1 : array_like
        Array_like means all those objects -- lists, nested lists, etc. --
        that can be converted to an array.  We can also refer to
        variables like `var1`.
    var2 : int
        The type above can either refer to an actual Python type
        (e.g. ``int``), or describe the type of the variable in more
        detail, e.g. ``(N,) ndarray`` or ``array_like``.
    *args : iterable
        Other arguments.
    long_var_name : {'hi', 'ho'}, optional
        Choices in brackets, default first when optional.

    Returns
    -------
    type
        Explanation of anonymous return value of type ``type``.
    describe : type
        Explanation of return value named `describe`.

    Other Parameters
    ----------------
    only_seldom_used_keyword : int, optional
        Infrequently used parameters can be described under this optional
        section to prevent cluttering the Parameters section.
    **kwargs : dict
        Other infrequently used keyword arguments.

    Raises
    ------
    BadException
        Because you shouldn't have done that.

    See Also
    --------
    numpy.array : Relationship (optional).

    Notes
    -----
    Notes about the implementation algorithm (if needed).

    Examples
    --------
    >>> np.add(1, 2)
    3
    """

NUMPY_SHARED = """Add two numbers.

    Parameters
    ----------
    a, b : int
        The numbers to add.

        Both must be finite.
    c
        Added too, no type given.
    unused : float
    See the note below, which is no entry
        and whose text is dropped.

    Notes
    -----
    a : this is not a parameter.
    """

NUMPY_EXAMPLES_FIRST = """Scale an array.

    Examples
    --------
    >>> scale([1, 2], 2)

    Keyword Arguments
    -----------------
    factor : float
        The scale.
    """

# -- reST / Sphinx ----------------------------------------------------------------------------------

# The example of Sphinx's documentation of the Python domain.
SPHINX_EXAMPLE = """Send a message to a recipient.

    :param str sender: The person sending the message
    :param str recipient: The recipient of the message
    :param str message_body: The body of the message
    :param priority: The priority of the message, can be a number 1-5
    :type priority: integer or None
    :return: the message id
    :rtype: int
    :raises ValueError: if the message_body exceeds 160 characters
    :raises TypeError: if the message_body is not a basestring
    """

REST_SYNONYMS = """Open a connection.

    :class:`Connection` objects are returned; see :func:`close`.

    :returns: the connection
    :parameter host: The host name,
        continued on a second line.

        And a second paragraph.
    :arg int port: The port.
    :argument dict[str, int] options: Options.
    :key timeout: Seconds.
    :keyword retries: How many times.
    :param *args: More.
    :param:
    :param nodoc:
    """

CASES = [
    pytest.param(
        GOOGLE_STYLE_GUIDE,
        "Fetches rows from a Smalltable.\n\n"
        "Retrieves rows pertaining to the given keys from the Table instance\n"
        "represented by table_handle.  String keys will be UTF-8 encoded.",
        {
            "table_handle": "An open smalltable.Table instance.",
            "keys": "A sequence of strings representing the key of each table row to fetch.  "
            "String keys will be UTF-8 encoded.",
            "require_all_keys": "If True only rows with values set for all keys will be returned.",
        },
        id="google-style-guide",
    ),
    pytest.param(
        GOOGLE_TYPED,
        "Copy a file: the body below mentions a colon too.\n\n"
        "The copy is atomic: the target appears whole or not at all.\n\n"
        "Permissions are kept. Args: in the middle of a line is prose.",
        {
            "source": "Path of the file to copy.",
            "target": "Where to copy it. Defaults to the current directory. A second paragraph about the target.",
            "mode": "Maps the old mode (an int) to the new one.",
            "args": "Passed on to ``open``.",
            "kwargs": "Options: ``follow``, ``buffer``.",
        },
        id="google-types-optional-stars",
    ),
    pytest.param(
        GOOGLE_ORDER,
        "Search the index.",
        {"limit": "At most this many hits.", "query": "The text to find.", "timeout": "Seconds to wait."},
        id="google-sections-in-any-order",
    ),
    pytest.param(
        GOOGLE_INDENTED_PROSE,
        "Run a command.\n\nThe shell sees it like this::\n\n    Args:\n        not: a parameter",
        {"command": "What to run.", "check": "Raise on failure."},
        id="google-header-indented-in-prose",
    ),
    pytest.param(
        NUMPYDOC_EXAMPLE,
        "Summarize the function in one line.\n\n"
        "Several sentences providing an extended description. Refer to\n"
        "variables using back-ticks, e.g. `var`.",
        {
            "var1": "Array_like means all those objects -- lists, nested lists, etc. -- that can be converted to an "
            "array.  We can also refer to variables like `var1`.",
            "var2": "The type above can either refer to an actual Python type (e.g. ``int``), or describe the type of "
            "the variable in more detail, e.g. ``(N,) ndarray`` or ``array_like``.",
            "args": "Other arguments.",
            "long_var_name": "Choices in brackets, default first when optional.",
            "only_seldom_used_keyword": "Infrequently used parameters can be described under this optional section to "
            "prevent cluttering the Parameters section.",
            "kwargs": "Other infrequently used keyword arguments.",
        },
        id="numpydoc-example",
    ),
    pytest.param(
        NUMPY_SHARED,
        "Add two numbers.",
        {
            "a": "The numbers to add. Both must be finite.",
            "b": "The numbers to add. Both must be finite.",
            "c": "Added too, no type given.",
        },
        id="numpy-shared-names",
    ),
    pytest.param(NUMPY_EXAMPLES_FIRST, "Scale an array.", {"factor": "The scale."}, id="numpy-examples-first"),
    pytest.param(
        SPHINX_EXAMPLE,
        "Send a message to a recipient.",
        {
            "sender": "The person sending the message",
            "recipient": "The recipient of the message",
            "message_body": "The body of the message",
            "priority": "The priority of the message, can be a number 1-5",
        },
        id="sphinx-example",
    ),
    pytest.param(
        REST_SYNONYMS,
        "Open a connection.\n\n:class:`Connection` objects are returned; see :func:`close`.",
        {
            "host": "The host name, continued on a second line. And a second paragraph.",
            "port": "The port.",
            "options": "Options.",
            "timeout": "Seconds.",
            "retries": "How many times.",
            "args": "More.",
        },
        id="rest-synonyms-and-types",
    ),
    pytest.param(
        """Tell the time.

        Note: this line is prose, its colon not a title.

        Usage:
            An unknown title is text too, and so is a literal block::

                Returns:
        """,
        "Tell the time.\n\n"
        "Note: this line is prose, its colon not a title.\n\n"
        "Usage:\n"
        "    An unknown title is text too, and so is a literal block::\n\n"
        "        Returns:",
        {},
        id="plain-with-colons",
    ),
    pytest.param("Ping.", "Ping.", {}, id="one-line"),
    pytest.param("  \n\n  Ping.  \n\n   ", "Ping.", {}, id="blank-lines-around"),
    pytest.param(None, None, {}, id="none"),
    pytest.param("", None, {}, id="empty"),
    pytest.param(" \t\n\r\n  \n", None, {}, id="whitespace-only"),
    pytest.param("\n    Args:\n        x: only params.\n    ", None, {"x": "only params."}, id="no-description"),
    pytest.param(
        "Split text.\r\n\r\n\tUse it well.\r\n\r\n\tArgs:\r\n\t\ttext: The text,\r\n\t\t\twrapped.\r\n",
        "Split text.\n\nUse it well.",
        {"text": "The text, wrapped."},
        id="tabs-and-crlf",
    ),
    pytest.param(
        "Greet.\n\nArgs:\n    ﬁle: Ligatures fold, as Python folds names.\n    naïve: Unicode names.",
        "Greet.",
        {"file": "Ligatures fold, as Python folds names.", "naïve": "Unicode names."},
        id="unicode-names",
    ),
    pytest.param(
        "Parse.\n\nParameters\n--\nx : int\n    Too short an underline for a title.",
        "Parse.\n\nParameters\n--\nx : int\n    Too short an underline for a title.",
        {},
        id="numpy-short-underline",
    ),
]


@pytest.mark.parametrize(("doc", "description", "params"), CASES)
def test_real_world_docstrings(doc: str | None, description: str | None, params: dict[str, str]) -> None:
    parsed = parse_docstring(doc)
    assert parsed.description == description
    assert list(parsed.params.items()) == list(params.items())


def test_a_functions_doc_reads_the_same_indented_or_cleaned() -> None:
    def copy(source: str, target: str) -> None:
        """Copy a file.

        Args:
            source: From here.
            target: To there.
        """

    expected = Docstring("Copy a file.", {"source": "From here.", "target": "To there."})
    assert parse_docstring(copy.__doc__) == expected
    assert parse_docstring(inspect.cleandoc(copy.__doc__ or "")) == expected


def test_a_str_subclass_is_read_as_its_text() -> None:
    class Odd(str):
        __slots__ = ()

        def splitlines(self, keepends: bool = False) -> list[str]:
            raise RuntimeError

        def replace(self, *args: object) -> str:
            raise RuntimeError

    assert parse_docstring(Odd("Ping.\n\n:param x: y")) == Docstring("Ping.", {"x": "y"})
    assert parse_docstring(3) == Docstring(None, {})  # type: ignore[arg-type]


def test_a_docstring_is_frozen_hashable_and_owns_its_params() -> None:
    given = {"x": "y"}
    doc = Docstring("d", given)
    given["z"] = "w"
    assert dict(doc.params) == {"x": "y"}
    with pytest.raises(TypeError):
        doc.params["z"] = "w"  # type: ignore[index]
    with pytest.raises(FrozenInstanceError):
        doc.description = "e"  # type: ignore[misc]
    assert hash(doc) == hash(Docstring("d", {"x": "y"}))
    assert doc == parse_docstring("d\n\nArgs:\n    x: y")


def test_long_and_pathological_docstrings_take_linear_time() -> None:
    n = 100_000
    shapes = [
        "a" + " " * n + "b:",  # spaces a backtracking title pattern would revisit
        "Args:\n    x" + " " * n + "(" + ") " * n,  # an entry whose type never closes with "):"
        "Args:\n" + "    x (int): y\n" * (n // 10),
        ":param" + " x" * n,  # a field that never closes
        ":param x:" + " y" * n,
        ("Parameters\n----------\n" + "a, " * 100 + "b : int\n    text\n") * 100,
        "Summary.\n" + "\t" * n + "x",
        "x\n" * n,
        "Returns\n-------\n" * (n // 20),
    ]
    start = time.process_time()
    for doc in shapes:
        parse_docstring(doc)
    # Well under 0.1 s of CPU on a laptop; a quadratic step would take minutes.
    assert time.process_time() - start < 2


# -- properties --------------------------------------------------------------------------------------

FRAGMENTS = st.sampled_from(
    [
        "Args:",
        "Parameters",
        "----------",
        "Returns:",
        "Returns",
        "-------",
        ":param",
        ":type",
        ":returns:",
        ":class:",
        " x",
        "x",
        "*",
        "**kw",
        "ﬁ",
        "1a",
        ":",
        ",",
        "(",
        ")",
        " (int)",
        " : ",
        "    ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\x0c",
        "\u2028",
        "\x85",
        "é",
        "text",
        "-",
    ]
)
DOCSTRINGS = st.lists(FRAGMENTS, max_size=60).map("".join) | st.text()


@EXAMPLES
@given(DOCSTRINGS)
def test_any_text_parses_to_identifiers_and_one_line_texts(doc: str) -> None:
    parsed = parse_docstring(doc)
    for name, text in parsed.params.items():
        assert name.isidentifier()
        assert text
        assert text == text.strip()
        assert "\n" not in text
    if parsed.description is not None:
        assert parsed.description == parsed.description.strip("\n")
        assert parsed.description.strip()


@EXAMPLES
@given(st.text(alphabet="ab. \n\t", max_size=80))
def test_text_without_sections_is_all_description_cleaned_as_cleandoc_does(doc: str) -> None:
    cleaned = "\n".join(line.rstrip() for line in inspect.cleandoc(doc).split("\n")).strip("\n")
    assert parse_docstring(doc) == Docstring(cleaned or None, {})


@EXAMPLES
@given(DOCSTRINGS, st.sampled_from(["\t", " " * 8, "    \t", " " * 16]))
def test_indenting_the_lines_after_the_first_changes_nothing(doc: str, indent: str) -> None:
    # By whole tab stops: a tab inside a line expands to the next stop, so the indentation must keep them.
    first, *rest = doc.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    indented = "\n".join([first, *(indent + line for line in rest)])
    assert parse_docstring(indented) == parse_docstring(doc)


class Window(TypedDict):
    """A span of days."""

    start: str
    end: str


def test_a_parameter_s_args_text_wins_over_its_typeddict_s_docstring() -> None:
    @tool(name="demo.report", version="1.0.0")
    def report(window: Window, other: Window) -> str:
        """Make a report.

        Args:
            window: the days the report covers, both included.
        """
        return window["start"]

    properties = report.input.json_schema()["properties"]
    assert properties["window"]["description"] == "the days the report covers, both included."
    assert properties["other"]["description"] == "A span of days."  # no text of its own: its type's
