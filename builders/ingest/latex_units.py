"""LaTeX text helpers: balanced brace groups, and siunitx quantities written out ("5 nm")."""

from __future__ import annotations

import re


def group(text: str, start: int) -> tuple[str, int] | None:
    """The balanced ``{...}`` opening at ``start`` (spaces before it allowed): (inside, index after it)."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "{":
        return None
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == "\\":
            continue
        if c == "{" and text[j - 1] != "\\":
            depth += 1
        elif c == "}" and text[j - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j], j + 1
    return None


# siunitx: \SI{5}{\nano\meter} -> "5 nm", so that numbers keep their units for numeric validation
_PREFIX = {
    "yocto": "y",
    "zepto": "z",
    "atto": "a",
    "femto": "f",
    "pico": "p",
    "nano": "n",
    "micro": "µ",
    "milli": "m",
    "centi": "c",
    "deci": "d",
    "kilo": "k",
    "mega": "M",
    "giga": "G",
    "tera": "T",
}
_UNIT = {
    "meter": "m",
    "metre": "m",
    "gram": "g",
    "second": "s",
    "kelvin": "K",
    "celsius": "°C",
    "degreeCelsius": "°C",
    "electronvolt": "eV",
    "volt": "V",
    "ampere": "A",
    "hour": "h",
    "minute": "min",
    "mole": "mol",
    "molar": "M",
    "pascal": "Pa",
    "watt": "W",
    "joule": "J",
    "hertz": "Hz",
    "tesla": "T",
    "ohm": "Ω",
    "siemens": "S",
    "liter": "L",
    "litre": "L",
    "percent": "%",
    "angstrom": "Å",
    "coulomb": "C",
    "farad": "F",
    "newton": "N",
    "bar": "bar",
    "degree": "°",
    "radian": "rad",
    "candela": "cd",
    "becquerel": "Bq",
    "gray": "Gy",
    "henry": "H",
    "weber": "Wb",
    "lux": "lx",
    "dalton": "Da",
}
_SI = re.compile(r"\\(SI|qty|si|unit|num)\s*(?:\[[^\]]*\])?(?=\s*\{)")


def _units(spec: str) -> str:
    out, prefix = [], ""
    for token in re.findall(r"\\([A-Za-z]+)|([^\\\s]+)", spec):
        name, literal = token
        if literal:
            out.append(literal.replace("~", " ").replace(".", "·"))
        elif name in _PREFIX:
            prefix = _PREFIX[name]
        elif name == "per":
            out.append("/")
        elif name in ("squared", "square"):
            out.append("²")
        elif name in ("cubed", "cubic"):
            out.append("³")
        else:
            out.append(prefix + _UNIT.get(name, name))
            prefix = ""
    return re.sub(r"\s*/\s*", "/", " ".join(out)).replace(" ²", "²").replace(" ³", "³")


def siunitx(text: str) -> str:
    while m := _SI.search(text):
        first = group(text, m.end())
        if first is None:
            return text
        if m[1] in ("SI", "qty"):
            second = group(text, first[1])
            value, end = (f"{first[0]} {_units(second[0])}", second[1]) if second else (first[0], first[1])
        elif m[1] == "num":
            value, end = first
        else:
            value, end = _units(first[0]), first[1]
        text = text[: m.start()] + value + text[end:]
    return text
