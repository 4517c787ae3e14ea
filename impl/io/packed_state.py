"""Objects as typed arrays and a small JSON description: how the compiled-vocabulary cache
(``bpeproof.impl.io.vocab_cache``) stores a tokenizer's model.

``pack(value, classes)`` turns a value into a description (JSON: numbers, strings, lists and objects) and byte
sections; ``unpack(description, sections, classes)`` makes an equal value from them.  Large containers become
arrays (in the machine's byte order), so that a vocabulary of 200,000 tokens unpacks in a few passes at C speed
rather than in one Python step per token: a list of ints is one int32 array (int64 when one does not fit), of
floats one float64 array, of bytes or of strings one blob and the offsets where its items start (a list with
``None`` among them adds the places of the ``None``), of equal-length tuples one array per column; a list of
ints that counts 0, 1, 2, … is only its length, of bools one byte each, of objects of one class (their
``__dict__`` alone) one column per attribute; a dict is the list of its keys and the list of its values; a set
or a tuple is its items.  The blobs are joined and cut in C when the loaders' C readers are built
(``bpeproof.impl.io.c_readers``).

Objects are stored only of the classes in ``classes``, class objects the caller gives (the reader of one kind of
file knows what its tokenizers are made of), and a description names a class by its place among them, never by a
name that would have to be looked up: a renamed class fails where it is imported, not in an entry.  A class that
says how it is stored (``Packable``: the models, whose tables only some uses need) gives its state by
``packed()`` and is made again by ``from_packed``, which may leave some of it packed (``PackedState.later``)
until a ``functools.cached_property`` of the class reads it; any other is stored as its attributes
(``__dict__`` and ``__slots__``), as pickle stores them, and made by ``__new__``, then each attribute set (no
method of the class runs).  Unpacking makes nothing else but compiled ``re`` and ``regex`` patterns (compiled
again from their text, flags and named lists) and the C merge tables (``_fastenc.Merger.tables`` /
``Merger.from_tables``, which checks every id).  A value of any other type cannot be packed
(``UnpackableError``): the caller then does without the cache.  A description or section that does not fit (a
damaged file) raises ``UnpackableError`` too, never anything a caller would have to know.
"""

from __future__ import annotations

import importlib
import operator
import re
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from functools import partial
from itertools import accumulate, compress, pairwise, repeat
from typing import Any, Generic, Protocol, Self, TypeVar, runtime_checkable

from bpeproof.impl.io.c_readers import c_readers

__all__ = ["Lazy", "Packable", "PackedState", "UnpackableError", "pack", "packed_attributes", "restored",
           "unpack", "unpacked_later"]

T = TypeVar("T")

#: The C extension whose merge tables are packed by their ``tables()``.
_FASTENC = "bpeproof.impl._c._fastenc"
#: The array codes of the widths of packed ints.
_INT_CODES = {4: "i", 8: "q"}


class UnpackableError(ValueError):
    """A value that cannot be packed (a type not allowed), or a description that cannot be unpacked."""


class Lazy(Generic[T]):
    """A value made the first time it is asked for (an attribute an entry holds still packed); it pickles and
    copies as the value."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make: Callable[[], T] | None = make
        self._value: T | None = None

    @classmethod
    def ready(cls, value: T) -> Lazy[T]:
        """A value already made."""
        made: Lazy[T] = cls.__new__(cls)
        made._make, made._value = None, value
        return made

    def value(self) -> T:
        make = self._make
        if make is not None:  # (two threads may both make it: the same value, one kept)
            self._value = make()
            self._make = None
        return self._value  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:
        return Lazy.ready, (self.value(),)


class PackedState:
    """The state ``packed()`` gave, as ``from_packed`` reads it back: each item unpacked when it is asked for
    (``state[name]``), or left packed until it is read (``later``)."""

    def __init__(self, unpacker: _Unpacker, nodes: dict[str, Any]) -> None:
        self._unpacker = unpacker
        self._nodes = nodes

    def __getitem__(self, name: str) -> Any:
        return self._unpacker.unpack(self._nodes[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._nodes)

    def later(self, name: str) -> Lazy[Any]:
        """The item ``name``, unpacked when first asked for (``KeyError`` now when the state has none)."""
        return Lazy(partial(self._unpacker.unpack, self._nodes[name]))


@runtime_checkable
class Packable(Protocol):
    """A class that says how the cache stores it: ``packed()`` gives its state (values ``pack`` takes: plain data,
    patterns, the C merge tables, objects of the entry's classes), and ``from_packed`` makes an equal object
    from it, reading now what every use needs and leaving the rest packed (``PackedState.later``), for its
    ``functools.cached_property`` of that name to read when first used (``unpacked_later``)."""

    def packed(self) -> dict[str, Any]: ...

    @classmethod
    def from_packed(cls, state: PackedState) -> Self: ...


#: The attribute that holds the attributes ``restored`` left packed (name → ``Lazy``).
_LATER = "_packed_later"


def packed_attributes(value: object, *, derived: Collection[str] = (), later: Collection[str] = ()
                      ) -> dict[str, Any]:
    """``packed()`` of an object stored as its attributes (``__dict__``): all of them but the ``derived`` ones (a
    ``functools.cached_property`` makes each again from the others), each of ``later`` (a cached property too)
    made first if it is still packed (``restored``)."""
    for name in vars(value).get(_LATER, ()):
        if name in later:
            getattr(value, name)
    return {name: item for name, item in vars(value).items() if name not in derived and name != _LATER}


def restored(kind: type[T], state: PackedState, *, later: Collection[str] = ()) -> T:
    """``from_packed`` of an object stored as its attributes: made by ``__new__`` (no method of it runs), each
    attribute of ``state`` set, those of ``later`` left packed, each for the class's cached property of that name
    to unpack (``unpacked_later``)."""
    value = kind.__new__(kind)
    pending: dict[str, Lazy[Any]] = {}
    for name in state:
        if name in later:
            pending[name] = state.later(name)
        else:
            object.__setattr__(value, name, state[name])
    if pending:
        object.__setattr__(value, _LATER, pending)
    return value


def unpacked_later(value: object, name: str) -> Any:
    """The attribute ``name`` that ``restored`` left packed, unpacked now: what a cached property of that name
    returns (it is only reached on an object the cache made, whose constructor did not set the attribute)."""
    pending: dict[str, Lazy[Any]] = vars(value).get(_LATER, {})
    if name not in pending:  # (an attribute the object did not have when it was packed)
        raise AttributeError(f"{type(value).__name__!r} object has no attribute {name!r}")
    return pending[name].value()


def _attributes(value: object) -> dict[str, Any]:
    """An object's state as pickle takes it by default: its ``__dict__`` and every set slot of its classes."""
    found: dict[str, Any] = dict(getattr(value, "__dict__", {}))
    for kind in type(value).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                found[name] = getattr(value, name)
    return found


def _plain_objects(kind: type) -> bool:
    """Whether the objects of a class are their ``__dict__`` alone (no slots, not ``Packable``), so that a list of
    them packs as one column per attribute."""
    if issubclass(kind, tuple) or issubclass(kind, Packable) or not hasattr(kind, "__dict__"):
        return False
    return all(not base.__dict__.get("__slots__") for base in kind.__mro__[:-1])


class _Packer:
    def __init__(self, classes: Sequence[type]) -> None:
        self.place = {kind: index for index, kind in enumerate(classes)}  # a class → its place, its name in entries
        self.sections: list[bytes] = []
        self.section_of: dict[bytes, int] = {}

    def section(self, data: bytes) -> int:
        """The index of a section holding ``data`` (the same bytes are stored once)."""
        index = self.section_of.get(data)
        if index is None:
            index = self.section_of[data] = len(self.sections)
            self.sections.append(data)
        return index

    def ints(self, values: Iterable[int]) -> tuple[int, int]:
        """The section of the ints as an int32 array, or int64 when one does not fit, and that width."""
        for width, code in _INT_CODES.items():
            try:
                return self.section(array(code, values).tobytes()), width
            except OverflowError:
                continue
        raise UnpackableError("an int beyond 64 bits in a packed list")

    def joined(self, values: list[Any], text: bool) -> dict[str, Any]:
        """Bytes or strings as one blob (strings in UTF-8, lone surrogates kept) and the offsets where they start
        (of the strings: in code points)."""
        fast = c_readers()
        if fast is not None:
            blob, offsets, width = fast.joined(values)
        else:
            blob = ("" if text else b"").join(values)
            numbers = array("i" if len(blob) < 1 << 31 else "q", accumulate(map(len, values), initial=0))
            offsets, width = numbers.tobytes(), numbers.itemsize
        data: bytes = blob.encode("utf-8", "surrogatepass") if text else blob
        return {"k": "str" if text else "bytes", "s": self.section(data), "o": self.section(offsets), "w": width}

    def items(self, values: Sequence[Any]) -> dict[str, Any]:
        """The description of a sequence's items, as one array where they are all of one kind."""
        fast = c_readers()
        if fast is not None and values and type(values) is list:  # one pass in C for a list of ints or of bytes
            first = type(values[0])
            if first is int:
                found = fast.int_array(values)
                if found is not None:
                    data, width, counting = found
                    return {"k": "count", "n": len(values)} if counting else {
                        "k": "int", "s": self.section(data), "w": width}
            elif first is bytes or first is str:
                try:
                    return self.joined(values, first is str)
                except TypeError:  # items of other kinds among them
                    pass
        kinds = set(map(type, values))
        none = type(None)
        if len(kinds) == 2 and none in kinds and values:
            (kind,) = kinds - {none}
            if kind in (int, bytes, str):
                missing = list(compress(range(len(values)), map(operator.is_, values, repeat(None))))
                fill = {int: 0, bytes: b"", str: ""}[kind]
                filled = list(values)
                for index in missing:  # the few missing items, set one by one
                    filled[index] = fill
                described = self.items(filled)
                if described["k"] != "any":  # (an int beyond 64 bits leaves the items one by one, None among them)
                    section, width = self.ints(missing)
                    return {**described, "none": section, "nw": width}
        if len(kinds) != 1:
            return {"k": "any", "v": [self.pack(value) for value in values]}
        (kind,) = kinds
        if kind is int:
            if values[0] == 0 and values[-1] == len(values) - 1 and values == list(range(len(values))):
                return {"k": "count", "n": len(values)}
            try:
                section, width = self.ints(values)
            except UnpackableError:  # an int beyond 64 bits: the items one by one
                return {"k": "any", "v": [self.pack(value) for value in values]}
            return {"k": "int", "s": section, "w": width}
        if kind is float:
            return {"k": "float", "s": self.section(array("d", values).tobytes())}
        if kind is bool:
            return {"k": "bool", "s": self.section(bytes(values))}
        if kind is bytes or kind is str:
            return self.joined(list(values), kind is str)
        if issubclass(kind, tuple) and (kind is tuple or kind in self.place):
            widths = set(map(len, values))
            if len(widths) == 1 and widths != {0}:
                row = None if kind is tuple else self.place[kind]
                columns = zip(*values, strict=True)
                return {"k": "rows", "c": row, "cols": [self.items(list(column)) for column in columns]}
        if kind in self.place and _plain_objects(kind):
            states = list(map(vars, values))
            names = list(states[0])
            if all(map(names.__eq__, map(list, states))):  # the same attributes, in the same order: by columns
                return {"k": "objects", "c": self.place[kind],
                        "a": {name: self.items(list(map(operator.itemgetter(name), states))) for name in names}}
        return {"k": "any", "v": [self.pack(value) for value in values]}

    def pack(self, value: Any) -> Any:
        kind = type(value)
        if kind is int and not -(1 << 63) <= value < 1 << 63:
            return {"t": "int", "x": format(value, "x")}  # hexadecimal: no limit on the digits of a large int
        if value is None or kind in (bool, int, str) or (kind is float and value == value):
            return value
        if kind is float:
            return {"t": "nan"}
        if kind is bytes:
            return {"t": "bytes", "s": self.section(value)}
        if kind in (list, tuple, set, frozenset):
            return {"t": kind.__name__, "e": self.items(list(value))}
        if kind is dict:
            return {"t": "dict", "k": self.items(list(value)), "v": self.items(list(value.values()))}
        if isinstance(value, re.Pattern) or (kind.__module__ == "_regex" and kind.__name__ == "Pattern"):
            named = getattr(value, "named_lists", None) or {}
            return {"t": "pattern", "m": "re" if isinstance(value, re.Pattern) else "regex",
                    "p": self.pack(value.pattern), "f": value.flags,
                    "n": {name: self.pack(frozenset(items)) for name, items in named.items()}}
        if kind.__module__ == _FASTENC and kind.__qualname__ == "Merger":
            units, keys, values, outputs, whole = value.tables()
            return {"t": "merger", "u": self.section(units), "k": self.section(keys), "v": self.section(values),
                    "o": self.items(outputs), "w": None if whole is None else self.items(whole)}
        place = self.place.get(kind)
        if place is None:
            raise UnpackableError(f"a {kind.__module__}.{kind.__qualname__} cannot be packed")
        if issubclass(kind, tuple):
            return {"t": "tuple-of", "c": place, "e": self.items(list(value))}
        state = value.packed() if issubclass(kind, Packable) else _attributes(value)
        return {"t": "object", "c": place, "a": {key: self.pack(item) for key, item in state.items()}}


def pack(value: Any, classes: Sequence[type]) -> tuple[Any, list[bytes]]:
    """The description and the byte sections of ``value``; ``classes``: every class whose objects may be packed
    (an entry names one by its place here: ``unpack`` must be given the same classes in the same order).
    ``UnpackableError`` for a value of any other type."""
    packer = _Packer(classes)
    try:
        return packer.pack(value), packer.sections
    except RecursionError:
        raise UnpackableError("a value nested too deeply to pack") from None


class _Unpacker:
    def __init__(self, sections: Sequence[bytes | memoryview], classes: Sequence[type]) -> None:
        self.sections = sections
        self.classes = classes
        self.decoded: dict[tuple[Any, ...], list[Any]] = {}

    def array(self, index: int, code: str) -> list[Any]:
        values = array(code)
        values.frombytes(self.sections[index])
        return values.tolist()

    def ints(self, index: int, width: int) -> list[int]:
        if width not in _INT_CODES:
            raise UnpackableError(f"ints of {width} bytes")
        return self.array(index, _INT_CODES[width])

    def cut(self, node: dict[str, Any]) -> list[Any]:
        """The bytes or strings of a blob and its offsets (``_Packer.joined``)."""
        data = self.sections[node["s"]]
        blob: Any = str(data, "utf-8", "surrogatepass") if node["k"] == "str" else bytes(data)
        fast = c_readers()
        if fast is not None:
            found: list[Any] = fast.cut(blob, self.sections[node["o"]], node["w"])
            return found
        offsets = self.ints(node["o"], node["w"])
        if not offsets or offsets[0] != 0 or offsets[-1] != len(blob) or offsets != sorted(offsets):
            raise UnpackableError("offsets that do not fit their blob")
        return [blob[start:end] for start, end in pairwise(offsets)]

    def items(self, node: dict[str, Any]) -> list[Any]:
        """The items of a sequence described by ``items``; the list is shared: callers copy it into their own."""
        key = (node["k"], node.get("s"), node.get("o"), node.get("c"), node.get("none"), node.get("n"))
        if node["k"] not in ("any", "rows", "objects") and key in self.decoded:
            return self.decoded[key]
        kind = node["k"]
        values: list[Any]
        if kind == "any":
            return [self.unpack(value) for value in node["v"]]
        if kind == "int":
            values = self.ints(node["s"], node["w"])
        elif kind == "count":
            values = list(range(node["n"]))
        elif kind == "float":
            values = self.array(node["s"], "d")
        elif kind == "bool":
            values = list(map(bool, bytes(self.sections[node["s"]])))
        elif kind in ("bytes", "str"):
            values = self.cut(node)
        elif kind == "rows":
            rows = zip(*map(self.items, node["cols"]), strict=True)
            return list(rows) if node["c"] is None else [self.kind(node["c"])(*row) for row in rows]
        elif kind == "objects":
            return self.objects(node)
        else:
            raise UnpackableError(f"unknown items {kind!r}")
        if "none" in node:
            values = list(values)  # (a decoded list may be shared: this one is its own)
            for index in self.ints(node["none"], node["nw"]):  # the few missing items, set one by one
                if not 0 <= index < len(values):
                    raise UnpackableError("a missing item outside its list")
                values[index] = None
        self.decoded[key] = values
        return values

    def objects(self, node: dict[str, Any]) -> list[Any]:
        """Objects of one class from one column per attribute (``_Packer.items``), made as ``unpack`` makes one."""
        kind: Any = self.kind(node["c"])
        if not _plain_objects(kind):
            raise UnpackableError(f"{node['c']} objects cannot be unpacked by columns")
        columns = {name: self.items(item) for name, item in node["a"].items()}
        lengths = set(map(len, columns.values()))
        if len(lengths) != 1:
            raise UnpackableError("columns of objects of different lengths")
        made = [kind.__new__(kind) for _ in range(lengths.pop())]
        for name, column in columns.items():
            for value, item in zip(made, column, strict=True):
                object.__setattr__(value, name, item)
        return made

    def kind(self, place: int) -> type:
        """The class at ``place`` among the allowed ones."""
        if type(place) is not int or not 0 <= place < len(self.classes):
            raise UnpackableError(f"{place!r} is not the place of a class that may be unpacked")
        return self.classes[place]

    def unpack(self, node: Any) -> Any:
        if not isinstance(node, dict):
            if isinstance(node, list):
                raise UnpackableError("a bare list in a description")
            return node
        tag = node["t"]
        if tag == "nan":
            return float("nan")
        if tag == "int":
            return int(node["x"], 16)
        if tag == "bytes":
            return bytes(self.sections[node["s"]])
        if tag in _CONTAINERS:
            return _CONTAINERS[tag](self.items(node["e"]))
        if tag == "dict":
            keys, values = self.items(node["k"]), self.items(node["v"])
            if len(keys) != len(values):
                raise UnpackableError("a dict whose keys and values differ in number")
            return dict(zip(keys, values, strict=True))
        if tag == "pattern":
            named = {name: self.unpack(items) for name, items in node["n"].items()}
            module = importlib.import_module({"re": "re", "regex": "regex"}[node["m"]])
            return module.compile(self.unpack(node["p"]), node["f"], **named)
        if tag == "merger":
            merger = importlib.import_module(_FASTENC).Merger
            whole = None if node["w"] is None else list(self.items(node["w"]))
            return merger.from_tables(self.sections[node["u"]], self.sections[node["k"]], self.sections[node["v"]],
                                      list(self.items(node["o"])), whole)
        if tag == "tuple-of":
            return self.kind(node["c"])(*self.items(node["e"]))
        if tag == "object":
            kind: Any = self.kind(node["c"])
            if not isinstance(node["a"], dict):
                raise UnpackableError("an object's state is not an object")
            if issubclass(kind, Packable):
                return kind.from_packed(PackedState(self, node["a"]))
            value = kind.__new__(kind)
            for name, item in node["a"].items():
                object.__setattr__(value, name, self.unpack(item))
            return value
        raise UnpackableError(f"unknown description {tag!r}")


_CONTAINERS: dict[str, Callable[[list[Any]], Any]] = {"list": list, "tuple": tuple, "set": set,
                                                       "frozenset": frozenset}


def unpack(description: Any, sections: Sequence[bytes | memoryview], classes: Sequence[type]) -> Any:
    """The value ``pack`` described, given the same ``classes``; ``UnpackableError`` for a description or sections
    that do not fit."""
    try:
        return _Unpacker(sections, classes).unpack(description)
    except UnpackableError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ImportError, OverflowError,
            UnicodeDecodeError, RecursionError) as error:
        raise UnpackableError(f"a damaged description: {type(error).__name__}: {error}") from None
