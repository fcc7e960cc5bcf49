"""Options are dataclass fields whose constraints sit beside them and are checked in one place.

``opt(default, min=..., max=..., choices=...)`` declares a field; ``check_fields(obj)`` checks every field
of a config (recursively) against its type annotation and those constraints, and raises a UserError that
names the option. Used by the pipeline config and the training config alike.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from dataclasses import field
from pathlib import Path
from typing import Any

import yaml

from sciqag_dataset.core.errors import UserError


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
    return field(default=default, metadata=meta)


def _describe(hint) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false", dict: "a mapping"}
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _describe(a) for a in typing.get_args(hint))
    if origin is list:
        args = typing.get_args(hint)
        return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s" if args else "a list"
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
        if not _fits(value, hints[f.name]):
            raise UserError(f"{name} must be {_describe(hints[f.name])}, got {value!r}")
        if isinstance(value, list) and value and all(dataclasses.is_dataclass(v) for v in value):
            for i, v in enumerate(value):
                check_fields(v, f"{name}[{i}].")
            continue
        meta = f.metadata
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
            near = difflib.get_close_matches(str(key), options, 1)
            found.append(
                f"{prefix}{key} (did you mean {prefix}{near[0]}?)"
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
