"""The YAML config: ``Config`` (``config_file``) and its sections, one per stage or service; option checking lives
in ``core.options``."""

import importlib
import warnings


def __getattr__(name: str):
    """``from sciqag_dataset.config import Config`` (the previous release's path) still works, with a warning."""
    module = importlib.import_module("sciqag_dataset.config.config_file")
    if name.startswith("__") or not hasattr(module, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"import {name} from sciqag_dataset.config.config_file", DeprecationWarning, 2)
    return getattr(module, name)
