"""The metric registry: every column `sciqag evaluate` can add, declared once by the module that computes it.

A :class:`Metric` says what its stage is, which columns it adds to the `evaluated` rows (with their
``datasets`` types), what it costs (the run order: cheapest first, so an LLM outage loses the least),
whether it needs the judge endpoint, its options (fields of the `evaluate:` section and flags of
`sciqag evaluate`), what it gathers in the merge and plots from it, how it sums up over the dataset, what the
card says about it and which filter rules read it (each rule an option of the `filter:` section). Config
choices, the run order, the `evaluated` schema, the merge, the summary, the plots, the card and the filter all
read the registry, so a metric is one module plus ``register(METRIC)``.

The built-in metrics register when ``sciqag_dataset.evaluation`` is imported; a module of your own
registers when it is imported, e.g. through the config's ``plugins:`` list (``--plugins MODULE``).
See ``examples/custom_metric.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciqag_dataset.core.errors import UserError
from sciqag_dataset.core.options import Option, option
from sciqag_dataset.core.registry import Registry

#: a filter rule's verdict on one row: None passes, FAIL drops it, MISSING drops it for lack of a value
FAIL, MISSING = "fail", "missing"


@dataclass(frozen=True)
class Rule:
    """A filter rule reading a metric's columns: ``sciqag filter`` keeps a pair only if every rule passes."""

    name: str  # the rule's key in the filter rules, e.g. "min_chunk_rate": an option of `filter:`, a flag
    check: Callable[[dict, Any], str | None]  # (evaluated row, the rule's value) -> None | FAIL | MISSING
    describe: Callable[[Any], str]  # the rule in words, for the card: value -> "answer chunk rate ≥ 0.5"
    help: str = ""  # one line for the config and --help
    type: Any = float | None  # the value's type (None, the default: the rule is off)
    constraints: Mapping[str, Any] = field(default_factory=dict)  # ``opt`` constraints: min, max, choices, what

    @property
    def option(self) -> Option:
        """The rule as an option of the `filter:` section (off by default)."""
        return option(self.name, self.type, None, help=self.help, **self.constraints)


def at_least(column: str) -> Callable[[dict, Any], str | None]:
    """The common rule: the row's ``column`` must be at least the threshold (a missing value is MISSING)."""

    def check(row: dict, threshold) -> str | None:
        value = row.get(column)
        return MISSING if value is None else FAIL if value < threshold else None

    return check


def at_most(column: str) -> Callable[[dict, Any], str | None]:
    """The row's ``column`` must be at most the threshold (a missing value is MISSING)."""

    def check(row: dict, threshold) -> str | None:
        value = row.get(column)
        return MISSING if value is None else FAIL if value > threshold else None

    return check


@dataclass(frozen=True)
class Context:
    """What a metric's stage is built from: the evaluate config, the QA source and the LLM clients."""

    cfg: Any  # config.EvaluateConfig
    source: str  # "generated" or "seed": the QA pairs evaluated
    judges: Sequence[Any] = ()  # LLMClients (several: a committee)
    llm: Any = None  # the client of a metric that needs one LLM (diversity's: its own, else the first judge)


@dataclass(frozen=True)
class Metric:
    """One extension point of `sciqag evaluate`: a stage over papers whose records carry, per paper,
    ``pair_metrics`` (a list aligned with the paper's QA pairs) and ``paper_metrics``."""

    name: str  # the stage name and its file, WORK/<name>.jsonl
    build: Callable[[Context], Any]  # -> stage.Stage
    pair_columns: Mapping[str, Any] = field(default_factory=dict)  # column -> datasets feature, per QA pair
    paper_columns: Mapping[str, Any] = field(default_factory=dict)  # column -> datasets feature, per paper
    # pair columns computed from the QA pair alone, filled in where its record gives none (or it was not run)
    derived: Mapping[str, Callable[[dict], Any]] = field(default_factory=dict)  # column -> (QA pair) -> value
    cost: int = 50  # the run order, cheapest first (numeric 10, coverage 20, diversity 30, racar 90)
    needs_llm: Callable[[Any], bool] = field(default=lambda cfg: False)  # (EvaluateConfig) -> needs the judge
    default: str = (
        "always"  # run when --metrics is not given: "always" | "with_judge" (a judge is configured) | "never"
    )
    view: Callable[[dict, Any], dict] | None = None  # (record, EvaluateConfig) -> the record as merged
    summarize: Callable[[Path, Any], dict] | None = None  # (its records that fit, EvaluateConfig) -> summary
    card: Callable[[dict], str] | None = None  # its summary -> the card's Markdown paragraph
    not_run: str | None = None  # what the card says when it was not run (None: nothing)
    rules: tuple[Rule, ...] = ()
    options: tuple[Option, ...] = ()  # its options: fields of the `evaluate:` section (``options.option``)
    # why it cannot run with this context (e.g. no judge), or None: checked before any metric runs
    requires: Callable[[Context], str | None] | None = None
    # the merge's one pass: (its gathered state, paper, its record as merged, the paper's rows, EvaluateConfig)
    collect: Callable[[dict, dict, dict, list[dict], Any], None] | None = None
    plots: Callable[[dict, Plots, Any], dict] | None = None  # (gathered, Plots, EvaluateConfig) -> what it drew
    plot_files: tuple[str, ...] = ()  # the prefixes of its files under WORK/plots (an old one goes on a new run)
    how_to_run: str = ""  # the command that computes it, for errors ("sciqag evaluate WORK --metrics numeric")
    help: str = ""  # one line for --metrics and docs


@dataclass
class Plots:
    """What a metric's ``plots`` draws with: the folder of the pictures, the papers merged, and ``attempt``:
    (name, draw(caption) -> the PNG's path, caption) -> the path relative to WORK, or None when it failed
    (logged; the other plots and the metrics are kept)."""

    folder: Path
    papers: int
    attempt: Callable[[str, Callable[[str], Path], str], str | None]


def _same_metric(old: Metric, new: Metric) -> bool:
    return old.build.__module__ == new.build.__module__


_REGISTRY: Registry[Metric] = Registry("metric", same=_same_metric)
#: called with each metric as it registers (the config sections add its options and rules as fields)
_LISTENERS: list[Callable[[Metric], None]] = []
#: keys of evaluation_summary.json beside the metrics' own
RESERVED = frozenset({"source", "papers", "pairs", "metrics", "plots", "card", "features"})


def register(metric: Metric) -> Metric:
    """Add a metric (importing its module twice is harmless); a different metric under a taken name, or a
    column, option or rule another metric has, is an error."""
    if not metric.name.isidentifier() or metric.name in RESERVED:
        raise ValueError(
            f"a metric needs a name that is an identifier and not one of {sorted(RESERVED)}, not {metric.name!r}"
        )
    old = _REGISTRY.find(metric.name)
    if old is not None and not _same_metric(old, metric):
        raise ValueError(f"a metric named {metric.name!r} is already registered (by {old.build.__module__})")
    others = [m for m in _REGISTRY if m.name != metric.name]
    for kind, of in (
        ("column(s)", lambda m: (*m.pair_columns, *m.paper_columns)),
        ("option(s)", lambda m: [o.name for o in m.options]),
        ("rule(s)", lambda m: [r.name for r in m.rules]),
    ):
        taken = {c: m.name for m in others for c in of(m)}
        clash = sorted(c for c in of(metric) if c in taken)
        if clash:
            raise ValueError(f"metric {metric.name!r}: {kind} {clash} already belong to {taken[clash[0]]!r}")
    for listener in _LISTENERS:
        listener(metric)
    return _REGISTRY.register(metric)


def on_register(listener: Callable[[Metric], None]) -> None:
    """Call ``listener`` with every metric registered, those already registered first."""
    _LISTENERS.append(listener)
    for metric in _REGISTRY:
        listener(metric)


def registered() -> list[Metric]:
    """Every metric, in the order they were registered (the order of their columns)."""
    return _REGISTRY.items()


def get_metric(name: str) -> Metric:
    """The metric named ``name``; UserError naming the registered ones (and the nearest) when there is none."""
    return _REGISTRY.get(name)


def default_metrics(judge_configured: bool) -> list[str]:
    """What `sciqag evaluate` runs when --metrics is not given."""
    wanted = {"always"} | ({"with_judge"} if judge_configured else set())
    return [m.name for m in _REGISTRY if m.default in wanted]


def run_order(names: Sequence[str]) -> list[Metric]:
    """The chosen metrics, cheapest first."""
    return sorted((get_metric(n) for n in names), key=lambda m: m.cost)


def pair_columns() -> dict[str, Any]:
    return {c: f for m in _REGISTRY for c, f in m.pair_columns.items()}


def paper_columns() -> dict[str, Any]:
    return {c: f for m in _REGISTRY for c, f in m.paper_columns.items()}


def rules() -> dict[str, tuple[Metric, Rule]]:
    """Every filter rule by name, with the metric whose columns it reads."""
    return {r.name: (m, r) for m in _REGISTRY for r in m.rules}


def rule_options() -> list[Option]:
    """Every filter rule as an option (name, type, default, help and constraints, ``Option.meta``), in
    registration order: the `filter:` section's fields and `sciqag filter`'s flags."""
    return [r.option for m in _REGISTRY for r in m.rules]


class _Names(Sequence):
    """The registered names as they are when read (a config field's ``choices`` is declared before a plugin
    registers its metric)."""

    def __getitem__(self, i):
        return _REGISTRY.names()[i]

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __iter__(self) -> Iterator[str]:
        return iter(_REGISTRY.names())

    def __contains__(self, name) -> bool:
        return name in _REGISTRY

    def __repr__(self) -> str:
        return repr(_REGISTRY.names())


NAMES: Sequence[str] = _Names()


#: The metrics shipped with the package, registered as a plugin's are: by importing their package by name
#: (the registry sits below the stages that fill it).
BUILT_IN = "sciqag_dataset.evaluation"


def plugin_modules() -> list[str]:
    """The modules whose metrics are registered in this process, the built-ins aside: what another process must
    import to read a config holding their options."""
    found = (getattr(m.build, "__module__", None) for m in _REGISTRY)
    return list(dict.fromkeys(name for name in found if name and not name.startswith(BUILT_IN)))


def load_plugins(modules: Sequence[str]) -> None:
    """Import the built-in metrics, then each module named in the config's ``plugins:`` (it registers its metrics
    and options as it is imported)."""
    importlib.import_module(BUILT_IN)
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise UserError(f"plugin {name!r} cannot be imported: {exc} (is it installed, or on PYTHONPATH?)") from exc


def pct(x: float | None, digits: int = 0) -> str:
    """A share as the card writes it: 0.683 -> "68 %"; None -> "n/a"."""
    return "n/a" if x is None else f"{x * 100:.{digits}f} %"


def num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"
