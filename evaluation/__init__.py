"""The evaluation stages. Importing the package registers the built-in metrics (``sciqag_dataset.core.metrics``), in
the order of their columns in the `evaluated` config."""

# isort: off
from sciqag_dataset.evaluation import racar, diversity, coverage, numeric  # noqa: F401
# isort: on
