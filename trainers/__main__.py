"""``python -m sciqag_dataset.trainers ARGS`` is ``sciqag train ARGS`` (for accelerate launch / torchrun)."""
import sys

from .cli import main

sys.exit(main())
