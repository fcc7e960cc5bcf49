import sys

from sciqag_dataset.cli import main

sys.exit(main())
