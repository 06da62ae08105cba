"""A record is the dataclass its body declares: the same construction, equality, hashing,
freezing and refusals before ``dataclasses`` is loaded, and a real dataclass once anything asks
for one (``fields``, ``asdict``, ``replace``, ``is_dataclass``)."""

from __future__ import annotations

import copy
import dataclasses
import threading

import pytest

from chimera_cards._util.records import asdict, field, record, replace


def _pair():
    """A frozen and a mutable record, and the dataclasses their bodies declare, each fresh."""

    class Frozen:
        """f"""

        name: str
        size: int = 0
        tags: list = field(default_factory=list)

    class Mutable:
        """m"""

        inner: object
        count: int = 1

    made = (record(frozen=True)(Frozen), record(Mutable))
    twins = (
        dataclasses.dataclass(frozen=True)(
            type(
                "Frozen",
                (),
                {
                    "__annotations__": Frozen.__annotations__,
                    "size": 0,
                    "tags": dataclasses.field(default_factory=list),
                },
            )
        ),
        dataclasses.dataclass(
            type("Mutable", (), {"__annotations__": Mutable.__annotations__, "count": 1})
        ),
    )
    return made, twins


def _behaviour(frozen_cls, mutable_cls) -> list:
    """What a caller can see of the two classes, as comparable values."""
    seen: list = []
    a = frozen_cls("x")
    seen += [repr(a), a == frozen_cls("x", 0, []), a != frozen_cls("y"), a.tags == []]
    seen.append(frozen_cls("x").tags is not frozen_cls("x").tags)  # a fresh default each time
    seen.append(hash(frozen_cls("x", 1, ())) == hash(frozen_cls("x", 1, ())))
    seen.append(frozen_cls.__match_args__)
    for attempt in (lambda: setattr(a, "name", "y"), lambda: delattr(a, "size")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            attempt()
    for bad in (
        frozen_cls,
        lambda: frozen_cls("x", name="y"),
        lambda: frozen_cls("x", colour="red"),
        lambda: frozen_cls("x", 1, [], 2),
    ):
        with pytest.raises(TypeError):
            bad()
    m = mutable_cls(a)
    m.count = 5
    seen += [repr(m), m == mutable_cls(frozen_cls("x"), 5), m.__hash__ is None]
    seen.append(copy.deepcopy(m) == m)
    return seen


def test_a_record_behaves_as_the_dataclass_its_body_declares_before_and_after_it_is_built():
    (frozen_cls, mutable_cls), (twin_f, twin_m) = _pair()
    before = _behaviour(frozen_cls, mutable_cls)
    assert "__dataclass_params__" not in vars(frozen_cls)  # nothing built yet
    expected = [str(s) for s in _behaviour(twin_f, twin_m)]
    assert [str(s).replace("_pair.<locals>.", "") for s in before] == expected
    assert dataclasses.is_dataclass(frozen_cls) and dataclasses.is_dataclass(mutable_cls)
    assert [f.name for f in dataclasses.fields(frozen_cls)] == ["name", "size", "tags"]
    assert "__dataclass_params__" in vars(frozen_cls)  # built, in place
    after = _behaviour(frozen_cls, mutable_cls)
    assert [str(s) for s in after] == [str(s) for s in before]


def test_instances_made_before_the_build_are_dataclass_instances_after_it():
    (frozen_cls, mutable_cls), _ = _pair()
    a, m = frozen_cls("x", 2, ["t"]), mutable_cls(frozen_cls("y"))
    assert asdict(m) == {"inner": {"name": "y", "size": 0, "tags": []}, "count": 1}
    assert replace(a, size=3) == frozen_cls("x", 3, ["t"])
    assert dataclasses.astuple(a) == ("x", 2, ["t"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.size = 4


def test_threads_asking_at_once_all_get_the_one_built_dataclass():
    (frozen_cls, _), _ = _pair()
    start = threading.Barrier(8)
    answers: list = []

    def ask() -> None:
        start.wait()
        answers.append(tuple(f.name for f in dataclasses.fields(frozen_cls)))
        answers.append(frozen_cls("z") == frozen_cls("z"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers.count(("name", "size", "tags")) == 8 and answers.count(True) == 8


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"__annotations__": {"a": "list"}, "a": []}, ValueError),  # a shared mutable default
        ({"__annotations__": {"a": "int", "b": "int"}, "a": 1}, TypeError),  # order of defaults
        ({"__annotations__": {"a": "int"}, "a": dataclasses.field(default=1)}, TypeError),
        ({"__annotations__": {"a": "int"}, "__eq__": lambda s, o: True}, TypeError),
        ({"__annotations__": {"a": "int"}, "__slots__": ("a",)}, TypeError),
    ],
)
def test_what_a_record_cannot_declare_is_refused_where_it_is_defined(body, error):
    with pytest.raises(error):
        record(type("Bad", (), dict(body)))


def test_a_record_cannot_derive_from_a_dataclass():
    base = dataclasses.dataclass(type("Base", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError):
        record(type("Child", (base,), {"__annotations__": {"b": "int"}}))


@pytest.mark.parametrize("annotation", ["ClassVar[int]", "typing.ClassVar[int]", "InitVar[int]"])
def test_a_classvar_or_initvar_is_refused_dataclass_would_read_it_by_the_modules_imports(
    annotation,
):
    with pytest.raises(TypeError):
        record(type("C", (), {"__annotations__": {"a": "int", "K": annotation}, "K": 3}))
