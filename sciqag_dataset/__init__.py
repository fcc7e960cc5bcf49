"""SciQAG-HF: scientific papers -> a closed-book QA dataset on the Hugging Face Hub.

The folders are the layers, each importing only those below it (``.importlinter``): ``cli`` > ``orchestration``
> the stages (``builders``, ``evaluation``, ``trainers``) > ``hub`` > ``cards`` > ``config`` > ``llm``, ``qa``,
``review`` > ``core``.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from pathlib import Path

__version__ = "0.1.0"

# In a source checkout the subpackages ``builders``, ``trainers``, ``evaluation``, ``cards``, ``examples`` are
# folders beside this one (setup.cfg maps them in). When this folder is imported straight from the checkout
# (`python -m sciqag_dataset.cli.train` in its root, with the package installed but not editable), they are
# found there too, rather than not at all.
_CHECKOUT = Path(__file__).resolve().parent.parent
if (_CHECKOUT / "setup.cfg").is_file() and (_CHECKOUT / "builders" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))  # noqa: F821 (a package's __path__)

# Import paths of the previous release's modules, kept working for one release (plugins import some of them).
MOVED = {
    **{
        f"sciqag_dataset.{m}": f"sciqag_dataset.core.{m}"
        for m in (
            "atomic console errors folders jsonl metrics options pair_ids processes records redact remote runner "
            "schema spans stage text_repair wiring work_lock"
        ).split()
    },
    "sciqag_dataset.sections": "sciqag_dataset.config.sections",
    "sciqag_dataset.filter_config": "sciqag_dataset.config.filter_section",
    "sciqag_dataset.generator_info": "sciqag_dataset.config.generator_info",
    "sciqag_dataset.builder": "sciqag_dataset.hub.dataset_builder",
    "sciqag_dataset.publish": "sciqag_dataset.hub.publish",
    "sciqag_dataset.exports": "sciqag_dataset.hub.exports",
    **{
        f"sciqag_dataset.{m}": f"sciqag_dataset.orchestration.{m}"
        for m in ("pipeline", "scale", "scale_steps", "benchmark_run", "augmentation")
    },
    "sciqag_dataset.review.card": "sciqag_dataset.cards.review_section",
    "sciqag_dataset.trainers.card": "sciqag_dataset.cards.model_card",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import sciqag_dataset.stage`` still works, with a DeprecationWarning naming the new path."""

    def find_spec(self, name, path=None, target=None):
        if name in MOVED and name != MOVED[name]:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return None  # a placeholder, replaced in sys.modules by the module under its new name

    def exec_module(self, module):
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} is now {new}; the old path goes in the next release", DeprecationWarning, 2)
        sys.modules[module.__name__] = importlib.import_module(new)


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())  # last: a module that exists is always found first
