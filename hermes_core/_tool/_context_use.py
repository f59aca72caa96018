"""Whether a tool's handler uses its call's context: ``current_call()`` reached in code its definition can see.

A call of a tool that uses its context sets the context for its handler; a
call of any other tool sets nothing, since setting a context variable around
every call costs a fifth of a ``call_sync`` (docs/performance.md). So whether
a handler uses it is decided before any call, from the handler itself, and a
handler that calls ``current_call()`` in its own code never fails at call time
for want of it. :func:`uses_context` looks for the function
:func:`~hermes_core.current_call` (under any name) or the name
``current_call`` in:

* the handler's code and the functions nested in it (an import inside a
  function, ``from hermes_core import current_call as cc``, is a name it reads);
* what its code reads: module globals (an alias made at the top of a module),
  the cells of its closure (a function a factory returned: ``cc`` above), its
  default arguments, and the attributes it reads of a module it holds;
* each function found there, the same way (a helper that reports progress,
  defined before or after the handler), and the methods of a class found
  there; the function a ``functools.partial``, a bound method or a decorator
  (``__wrapped__``) stands for; the class of a callable object.

The standard library and this package are not looked into (neither calls
``current_call()`` for a tool), and at most :data:`LOOKED_MAX` functions are
looked at for one handler. A handler that reaches ``current_call()`` in a
way no definition shows (a method of an object made at call time, a name
built at run time) is defined with ``context=True``.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import types
import weakref
from typing import Any, Final

__all__ = ["LOOKED_MAX", "uses_context"]

#: The most functions, classes and code objects looked at for one handler.
LOOKED_MAX: Final = 1000

# The answer for each handler, once it is final: it was found, or every module its search went through had
# finished loading (a tool defined while its module loads is asked again when a runtime is built from it).
_answers: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
# The functions a final search went all through without finding current_call, each with the class it was found
# on: a later search stops there (the tools of a plugin share their helpers).
_clean: weakref.WeakKeyDictionary[types.FunctionType, type | None] = weakref.WeakKeyDictionary()
_UNKNOWN: Final = object()


def uses_context(handler: object) -> bool:
    """Whether *handler* reaches ``current_call()`` in code its definition can see (see the module docstring).

    Asked when a tool is defined and when a runtime is built from it: a
    helper the handler names may be defined further down a module still
    loading at the first. An answer that can no longer change is kept, one per
    handler.
    """
    try:
        return _answers[handler]
    except (KeyError, TypeError):  # not asked yet, or a handler that cannot be weakly referenced
        pass
    found, final = _search(handler)
    if found or final:
        with contextlib.suppress(TypeError):  # a handler that cannot be weakly referenced is asked every time
            _answers[handler] = found
    return found


def _search(handler: object) -> tuple[bool, bool]:
    """Whether *handler* reaches current_call(), and whether a "no" is final (no module on the way still loads)."""
    seen: set[int] = set()
    final = True
    functions: list[tuple[types.FunctionType, type | None]] = []
    # What to look at, each with the class whose attributes its code's names may be (a method's own class).
    pending: list[tuple[object, type | None]] = [(handler, None)]
    while pending:
        item, owner = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if len(seen) > LOOKED_MAX:
            return False, True
        if _is_current_call(item):
            return True, True
        if type(item) is types.FunctionType:
            if _clean.get(item, _UNKNOWN) is owner:  # a search went all through it before
                continue
            functions.append((item, owner))
            if final and _loading(item.__module__):
                final = False
        reached = _reached(item, owner)
        if reached is None:  # code that names current_call
            return True, True
        pending.extend(reached)
    if final:  # all it reaches was looked at, and none of it named current_call: nor will it for the next tool
        for function, owner in functions:
            _clean[function] = owner
    return False, final


def _loading(module: str | None) -> bool:
    """Whether the module *module* is still being loaded: names its functions read may not exist yet."""
    spec = getattr(sys.modules.get(module or ""), "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _is_current_call(item: object) -> bool:
    """Whether *item* is :func:`hermes_core.current_call` (told by where it was defined: no import of it here)."""
    return (
        type(item) is types.FunctionType
        and item.__qualname__ == "current_call"
        and item.__module__ == "hermes_core._tool._call_context"
    )


def _reached(item: object, owner: type | None) -> list[tuple[object, type | None]] | None:
    """What *item*'s code may call, to look at next; None when its code names ``current_call`` itself."""
    if type(item) is types.FunctionType:
        return _function(item, owner)
    if isinstance(item, functools.partial):
        return [(part, None) for part in (item.func, *item.args, *item.keywords.values())]
    if isinstance(item, types.MethodType):
        return [(item.__func__, type(item.__self__))]
    if isinstance(item, staticmethod | classmethod):
        return [(item.__func__, owner)]
    if isinstance(item, property):
        return [(item.fget, owner), (item.fset, owner)]
    if callable(item) and not isinstance(item, type | types.BuiltinFunctionType) and not _foreign_object(item):
        kind = type(item)  # a callable object: its __call__, whose code's names may be its other methods
        return [(kind.__call__, kind), (getattr(item, "__wrapped__", None), None)]
    return []


def _function(function: types.FunctionType, owner: type | None) -> list[tuple[object, type | None]] | None:
    if _foreign(function.__module__):
        return []
    names: set[str] = set()
    codes = [function.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
    if "current_call" in names:
        return None
    held = function.__globals__
    found = [held[name] for name in names if name in held]
    for cell in function.__closure__ or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:  # a cell not filled yet
            continue
    found.extend(function.__defaults__ or ())
    found.extend((function.__kwdefaults__ or {}).values())
    reached: list[tuple[object, type | None]] = []
    if owner is not None:  # self.name, cls.name: the methods of the class the function was found on
        reached.extend(_named(owner, names))
    for item in found:
        if isinstance(item, types.ModuleType):  # module.name: the names this code reads of it
            attributes = vars(item)
            reached.extend((attributes[name], None) for name in names if name in attributes)
        elif isinstance(item, type):  # Class.name, Class(...).name
            reached.extend(_named(item, names))
        elif not callable(item) and not _foreign_object(item):  # an object the code holds: obj.name
            reached.extend(_named(type(item), names))
        else:
            reached.append((item, None))
    wrapped = getattr(function, "__wrapped__", None)
    if wrapped is not None:
        reached.append((wrapped, None))
    return reached


def _named(cls: type, names: set[str]) -> list[tuple[object, type | None]]:
    """The attributes of *cls* (its own and its bases', not the standard library's) that *names* name."""
    reached: list[tuple[object, type | None]] = []
    for base in cls.__mro__:
        if base is object or _foreign(base.__module__):
            continue
        attributes = vars(base)
        reached.extend((attributes[name], cls) for name in names if name in attributes)
    return reached


def _foreign_object(item: object) -> bool:
    return _foreign(type(item).__module__)


def _foreign(module: str | None) -> bool:
    """Whether code of *module* is never a tool's own: the standard library's, or this package's."""
    if module is None:
        return False
    top = module.partition(".")[0]
    return top == "hermes_core" or top in sys.stdlib_module_names
