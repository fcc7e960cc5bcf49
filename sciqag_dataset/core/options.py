"""Options are dataclass fields whose constraints sit beside them and are checked in one place.

``opt(default, min=..., max=..., choices=...)`` declares a field; ``check_fields(obj)`` checks every field
of a config (recursively) against its type annotation and those constraints, and raises a UserError that
names the option. Used by the pipeline config and the training config alike. An option declared away from its
section (a metric's, a filter rule's) is an ``option(name, type, default, **meta)``; ``extend_section`` makes
it a field of the section's class.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.registry import did_you_mean


def read_yaml(path: str | Path) -> dict:
    """A YAML config file as a mapping; UserError when it cannot be read or is not a mapping."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise UserError(f"cannot read the config {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: the config must be a YAML mapping")
    return data


def opt(default, **meta):
    """A field with its constraints beside it: ``min``, ``max`` (inclusive), ``choices`` (``what`` names a
    choice in messages); and for the CLI: ``help``, ``flag``, ``short``, ``metavar``, ``repeat``, ``cli``;
    ``internal`` marks a field the program writes: accepted in a file, never offered to the user."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    if dataclasses.is_dataclass(default):  # a section held by a section: each holder gets its own copy
        return field(default_factory=lambda d=default: copy.deepcopy(d), metadata=meta)
    return field(default=default, metadata=meta)


def _describe(hint) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "a mapping"}
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _describe(a) for a in typing.get_args(hint))
    if origin is list:
        args = typing.get_args(hint)
        return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s" if args else "a list"
    if origin is dict and typing.get_args(hint):
        key, value = (_describe(a).removeprefix("a ").removeprefix("an ") for a in typing.get_args(hint))
        return f"a mapping of {key}s to {value}s"
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _fits(value, hint) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if origin is list:
        args = typing.get_args(hint)
        return isinstance(value, list) and (not args or all(_fits(v, args[0]) for v in value))
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint) or dataclasses.is_dataclass(hint) and dataclasses.is_dataclass(value)
    return True


def check_fields(obj, where: str = "") -> None:
    """Every field of the dataclass ``obj`` (recursively) against its annotation and its metadata."""
    hints = typing.get_type_hints(type(obj))
    for f in dataclasses.fields(obj):
        name, value = f"{where}{f.name}", getattr(obj, f.name)
        if dataclasses.is_dataclass(value):
            check_fields(value, f"{name}.")
            continue
        if isinstance(value, list) and value and all(dataclasses.is_dataclass(v) for v in value):
            if not _fits(value, hints[f.name]):
                raise UserError(f"{name} must be {_describe(hints[f.name])}, got {value!r}")
            for i, v in enumerate(value):
                check_fields(v, f"{name}[{i}].")
            continue
        check_value(name, value, hints[f.name], f.metadata)


def _mapping_type(hint):
    """``dict[K, V]`` from ``dict[K, V]`` or ``dict[K, V] | None``."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return next((a for a in typing.get_args(hint) if typing.get_origin(a) is dict), hint)
    return hint


def check_value(name: str, value, hint, meta: typing.Mapping) -> None:
    """One option's value against its type and its ``opt`` constraints; UserError naming the option."""
    if not _fits(value, hint):
        raise UserError(f"{name} must be {_describe(hint)}, got {value!r}")
    if isinstance(value, dict) and {"choices", "min", "max"} & set(meta):
        # a mapping with constraints: its keys and values are of its type's, ``choices`` are its keys and
        # ``min`` and ``max`` bound its values (a mapping without them, as ``train``'s TRL fields, is passed on)
        key_type, value_type = typing.get_args(_mapping_type(hint)) or (Any, Any)
        if not all(_fits(k, key_type) and _fits(v, value_type) for k, v in value.items()):
            raise UserError(f"{name} must be {_describe(hint)}, got {value!r}")
        keys = {k: meta[k] for k in ("choices", "what") if k in meta}
        bounds = {k: meta[k] for k in ("min", "max") if k in meta}
        for key, v in value.items():
            check_value(name, key, Any, keys)
            check_value(f"{name}.{key}", v, Any, bounds)
        return
    for v in value if isinstance(value, list) else [value]:
        if v is None or isinstance(v, bool):
            continue
        if isinstance(v, float) and math.isnan(v):
            raise UserError(f"{name} must be a number, got nan")
        if "choices" in meta and v not in meta["choices"]:
            raise UserError(
                f"{name}: unknown {meta.get('what', 'value')} {v!r}; expected one of "
                f"{', '.join(map(str, meta['choices']))}"
            )
        if "min" in meta and isinstance(v, (int, float)) and v < meta["min"]:
            raise UserError(f"{name} must be at least {meta['min']}, got {v!r}")
        if "max" in meta and isinstance(v, (int, float)) and v > meta["max"]:
            raise UserError(f"{name} must be at most {meta['max']}, got {v!r}")


@dataclass(frozen=True)
class Option:
    """An option declared away from its section's class (a metric's option, a filter rule's threshold): its
    name, type, default and ``opt`` metadata (``help``, ``min``, ``max``, ``choices`` ...). ``extend_section``
    makes it a field of the section."""

    name: str
    type: Any
    default: Any = None
    meta: typing.Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def help(self) -> str:
        return self.meta.get("help", "")

    def check(self, value, where: str = "") -> None:
        check_value(f"{where}{self.name}", value, self.type, self.meta)


def option(name: str, type, default=None, **meta) -> Option:
    """``opt(default, **meta)`` for a field named ``name`` of type ``type``, declared outside its section."""
    return Option(name, type, default, types.MappingProxyType(meta))


#: the metadata key naming who added a field to a section (``extend_section``)
OWNER = "owner"


def extend_section(cls, options, owner: str, *, first: bool = False) -> None:
    """Add ``options`` (``Option``s of ``owner``) as fields of the dataclass ``cls``, in place: every holder of
    the class sees them (its constructor, ``dataclasses.fields``, ``check_fields``, the CLI's flags). ``first``
    puts the added fields before the class's own. An option ``owner`` added before is left as it is; a name
    the class already has otherwise is a ValueError."""
    current = {f.name: f for f in dataclasses.fields(cls)}
    new = []
    for o in options:
        f = current.get(o.name)
        if f is None:
            new.append(o)
        elif f.metadata.get(OWNER) != owner:
            raise ValueError(f"{owner}: the option {o.name!r} is already one of {cls.__name__}'s")
    if not new:
        return
    hints = dict(cls.__dict__.get("__annotations__", {}))
    for f in current.values():
        if f.name in hints:
            setattr(cls, f.name, f)  # the Field back in place: the class is processed again below
    for o in new:
        hints[o.name] = o.type
        setattr(cls, o.name, opt(o.default, **o.meta, **{OWNER: owner}))
    if first:
        added = [n for n in hints if n in current and current[n].metadata.get(OWNER)] + [o.name for o in new]
        hints = {**{n: hints[n] for n in added}, **{n: t for n, t in hints.items() if n not in added}}
    cls.__annotations__ = hints
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__match_args__"):
        if name in cls.__dict__:
            delattr(cls, name)
    dataclasses.dataclass(cls)


def _section_type(hint):
    """The dataclass a field holds (``X``, ``X | None``), or the item dataclass of ``list[X]``, else None."""
    for arg in (hint, *typing.get_args(hint)):
        if dataclasses.is_dataclass(arg):
            return arg
    return None


def unknown_keys(cls, data: dict, prefix: str = "") -> list[str]:
    """Every key of a YAML mapping, nested sections included, that ``cls`` has no option for: each named with
    the nearest option of its section, or, with none near, the options the section has. Internal fields
    (metadata ``internal``) are accepted and never offered."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    options = [name for name, f in fields.items() if not f.metadata.get("internal")]
    hints = typing.get_type_hints(cls)
    found = []
    for key, value in data.items():
        if key == "api_key":
            continue  # a pasted key: build_section refuses it with a message of its own
        if key not in fields:
            near = did_you_mean(key, options, prefix)
            found.append(
                f"{prefix}{key}{near}"
                if near
                else f"{prefix}{key} (the options {f'of {prefix[:-1]}' if prefix else 'here'}: {', '.join(options)})"
            )
            continue
        sub = _section_type(hints[key])
        if sub is None:
            continue
        if typing.get_origin(hints[key]) is list and isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    found += unknown_keys(sub, item, f"{prefix}{key}[{i}].")
        elif isinstance(value, dict):
            found += unknown_keys(sub, value, f"{prefix}{key}.")
    return found


def build_section(cls, data: dict, where: str):
    """``cls`` from a YAML mapping: unknown keys refused, nested sections built from the type hints."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: must be a mapping, got {data!r}")
    if "api_key" in data:  # guard against pasting a key into a file that may be shared
        raise UserError(f"{where}: put the key in an environment variable and name it in `api_key_env`")
    unknown = unknown_keys(cls, data)
    if unknown:
        raise UserError(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, value in data.items():
        sub = _section_type(hints[name])
        if sub is not None and value is None and typing.get_origin(hints[name]) is not list:
            continue  # an empty section in YAML: the defaults
        if sub is not None and typing.get_origin(hints[name]) is list and isinstance(value, list):
            value = [
                build_section(sub, v, f"{where}:{name}[{i}]") if isinstance(v, dict) else v
                for i, v in enumerate(value)
            ]
        elif sub is not None:
            value = build_section(sub, value, f"{where}:{name}")
        kwargs[name] = value
    return cls(**kwargs)
