"""The light integer enum of cucore.system.typing (DeviceArch, FieldId), as cuda.core's: its members are int
singletons of the class, so `FieldId.DEV_ECC_CURRENT == 1` and they pass wherever NVML takes a number."""
from __future__ import annotations


class _IntEnumMeta(type):
    """The metaclass of cuda.core's integer enums (a light IntEnum: members are int singletons of the class, an
    alias shares its value's singleton; the class iterates, counts and tests membership like an enum)."""

    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls.__singletons__ = {}
        cls.__members__ = {}
        for key, value in list(namespace.items()):
            if key.startswith("_") or not isinstance(value, int):
                continue
            singleton = cls.__singletons__.get(value)
            if singleton is None:
                singleton = int.__new__(cls, value)
                singleton._name = key
                cls.__singletons__[value] = singleton
            cls.__members__[key] = singleton
        for key, singleton in cls.__members__.items():
            setattr(cls, key, singleton)

    def __repr__(cls) -> str:
        return f"<enum '{cls.__name__}'>"

    def __len__(cls) -> int:
        return len(cls.__singletons__)

    def __iter__(cls):
        return iter(cls.__singletons__.values())

    def __contains__(cls, item) -> bool:
        return item in cls.__singletons__


class _IntEnum(int, metaclass=_IntEnumMeta):
    """An integer enum as cuda.core's (`DeviceArch.HOPPER == 9`, `.name`, `.value`, `DeviceArch(9)`)."""

    _name: str

    def __new__(cls, value: int):
        singleton = cls.__singletons__.get(value)
        if singleton is None:
            raise ValueError(f"{value} is not a valid {cls.__name__}")
        return singleton

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self._name}: {int(self)}>"

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self._name}"

    def __reduce__(self):
        return (type(self), (int(self),))

    @property
    def name(self) -> str:
        """The member's name."""
        return self._name

    @property
    def value(self) -> int:
        """The member's NVML number."""
        return int(self)
