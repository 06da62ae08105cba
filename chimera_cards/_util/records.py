"""Records that start up cheaply: a dataclass whose ``dataclasses`` machinery is built only when
something asks for it.

``check`` runs on every push and is judged against a bare interpreter start. Importing
``dataclasses`` loads ``inspect``, ``ast``, ``dis`` and ``tokenize`` (about half of a bare
start on its own), and each class it builds compiles several methods (~0.7 ms each class).
The records on ``check``'s path are declared with ``@record`` instead of ``@dataclass``: the
class body is the one definition. At run time ``record`` gives the class plain ``__init__``,
``__repr__``, ``__eq__`` (and ``__hash__``/``__setattr__`` when frozen) read from its
annotations, with dataclass semantics. The first time anything looks at the class as a
dataclass (``dataclasses.fields``, ``asdict``, ``replace``, ``is_dataclass``: all read
``__dataclass_fields__``), ``dataclasses.dataclass`` is applied to the same class body, in
place, and from then on it is an ordinary dataclass. The type checker sees ``dataclass`` itself.

Only what the records here use is supported: ``frozen`` and ``field(default_factory=...)``;
anything else (``ClassVar``, ``InitVar``, ``__slots__``, a dataclass base, its own ``__eq__``) is
refused where the class is defined.
"""

from __future__ import annotations

import _thread

TYPE_CHECKING = False  # typing is not imported at run time: check starts up on this module
if TYPE_CHECKING:
    from dataclasses import asdict, field, replace
    from dataclasses import dataclass as record
else:

    def record(cls=None, /, *, frozen=False):
        """``@dataclass`` or ``@dataclass(frozen=True)``, built lazily (see the module)."""

        def wrap(cls):
            return _prepare(cls, frozen)

        return wrap if cls is None else wrap(cls)

    def field(*, default_factory):
        """``dataclasses.field(default_factory=...)``: the only form records use."""
        return _Factory(default_factory)

    def asdict(obj):
        """``dataclasses.asdict`` (which builds the record's dataclass)."""
        import dataclasses

        return dataclasses.asdict(obj)

    def replace(obj, /, **changes):
        """``dataclasses.replace`` (which builds the record's dataclass)."""
        import dataclasses

        return dataclasses.replace(obj, **changes)


_MISSING = object()
# One build at a time: two threads asking at once get the same class, built once.
_BUILDING = _thread.allocate_lock()
_DERIVED = ("__init__", "__repr__", "__eq__", "__hash__")


class _Factory:
    """A field whose default is made afresh for each instance."""

    __slots__ = ("factory",)

    def __init__(self, factory) -> None:
        self.factory = factory


class _Fields:
    """``__dataclass_fields__`` of a record not yet built: reading it builds the dataclass."""

    def __get__(self, instance, owner):
        return _build(owner).__dataclass_fields__


def _prepare(cls, frozen: bool):
    """Give ``cls`` the methods ``dataclass(cls, frozen=frozen)`` would, without building it."""
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__qualname__}: a record cannot declare __slots__")
    if any("__dataclass_fields__" in base.__dict__ for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a record cannot derive from a dataclass or record")
    if any(n in cls.__dict__ for n in (*_DERIVED, "__setattr__", "__delattr__", "__match_args__")):
        raise TypeError(f"{cls.__qualname__}: a record derives {', '.join(_DERIVED)}")
    fields, defaults = _fields_of(cls)
    methods = {
        "__init__": _init(cls, fields, defaults, frozen),
        "__repr__": _repr(fields),
        "__eq__": _eq(fields),
        "__hash__": None,  # as dataclass: eq without frozen is unhashable
    }
    if frozen:
        methods |= _frozen(cls, fields)
    for name, method in methods.items():
        if method is not None:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
    setattr(cls, "__match_args__", fields)  # noqa: B010 -- mypy refuses the assignment
    cls.__dataclass_fields__ = _Fields()
    cls.__record_frozen__ = frozen
    # What ``_build`` takes away again before ``dataclass`` adds its own.
    cls.__record_added__ = (*methods, "__match_args__", "__dataclass_fields__", "__record_frozen__")
    # A factory's value is made per instance: it is no class attribute (as in a dataclass).
    made = {n: v for n, v in defaults.items() if type(v) is _Factory}
    for name in made:
        delattr(cls, name)
    cls.__record_factories__ = made
    return cls


def _fields_of(cls) -> tuple[tuple[str, ...], dict]:
    """(field names in order, name -> default) from the class body, as dataclass reads it."""
    names: list[str] = []
    defaults: dict = {}
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 -- inspect is the cost
    for name, annotation in annotations.items():
        # How dataclass reads a ClassVar or InitVar written as text depends on the module's own
        # imports: a record has neither, so it cannot be read differently.
        if str(annotation).split("[")[0].rpartition(".")[2] in ("ClassVar", "InitVar"):
            raise TypeError(f"{cls.__qualname__}.{name}: a record has no ClassVar or InitVar")
        names.append(name)
    for name in names:
        value = cls.__dict__.get(name, _MISSING)
        if value is _MISSING:
            if defaults:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            continue
        if type(value).__module__ == "dataclasses":
            raise TypeError(f"{cls.__qualname__}.{name}: use records.field(default_factory=...)")
        if type(value) is not _Factory and type(value).__hash__ is None:
            raise ValueError(
                f"mutable default {type(value)} for field {name} is not allowed: "
                "use default_factory"
            )
        defaults[name] = value
    return tuple(names), defaults


def _init(cls, fields: tuple[str, ...], defaults: dict, frozen: bool):
    count = len(fields)
    required = frozenset(fields[: count - len(defaults)])
    setter = object.__setattr__ if frozen else setattr
    title = f"{cls.__qualname__}.__init__()"

    def __init__(self, *args, **kwargs):
        if len(args) > count:
            raise TypeError(
                f"{title} takes {count + 1} positional arguments but {len(args) + 1} were given"
            )
        for name, value in zip(fields, args, strict=False):
            if name in kwargs:
                raise TypeError(f"{title} got multiple values for argument {name!r}")
            setter(self, name, value)
        for name in fields[len(args) :]:
            value = kwargs.pop(name, _MISSING)
            if value is _MISSING:
                if name in required:
                    raise TypeError(f"{title} missing required argument: {name!r}")
                value = defaults[name]
                if type(value) is _Factory:
                    value = value.factory()
            setter(self, name, value)
        if kwargs:
            raise TypeError(f"{title} got an unexpected keyword argument {next(iter(kwargs))!r}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    return __init__


def _repr(fields: tuple[str, ...]):
    def __repr__(self):
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in fields)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _eq(fields: tuple[str, ...]):
    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return tuple(getattr(self, n) for n in fields) == tuple(getattr(other, n) for n in fields)

    return __eq__


def _frozen(cls, fields: tuple[str, ...]) -> dict:
    def __hash__(self):
        return hash(tuple(getattr(self, name) for name in fields))

    def __setattr__(self, name, value):
        if type(self) is cls or name in fields:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in fields:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return {"__hash__": __hash__, "__setattr__": __setattr__, "__delattr__": __delattr__}


def _build(cls):
    """Make ``cls`` (a record not yet built) the dataclass its body declares, in place.

    ``dataclass`` builds a twin from the same body; its methods and fields then replace the
    plain ones one attribute at a time, so another thread sees one or the other, never neither.
    The plain ``__setattr__``/``__delattr__`` of a frozen record stay: they name ``cls`` itself.
    """
    with _BUILDING:
        if "__record_added__" not in cls.__dict__:
            return cls  # built meanwhile
        import dataclasses

        added = cls.__dict__["__record_added__"]
        body = {
            k: v
            for k, v in cls.__dict__.items()
            if k not in added and k not in ("__dict__", "__weakref__", "__record_factories__")
        }
        for name, made in cls.__dict__["__record_factories__"].items():
            body[name] = dataclasses.field(default_factory=made.factory)
        twin = dataclasses.dataclass(
            type(cls.__name__, (), body), frozen=cls.__dict__["__record_frozen__"]
        )
        for name, value in twin.__dict__.items():
            if name not in ("__setattr__", "__delattr__", "__dict__", "__weakref__") and (
                name.startswith("__dataclass_") or name in added or name == "__replace__"
            ):
                setattr(cls, name, value)
        for name in ("__record_frozen__", "__record_factories__", "__record_added__"):
            delattr(cls, name)
        return cls
