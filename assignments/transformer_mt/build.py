"""Part 2's build (`make template`): the shared builder assignments/build.py for this assignment."""

# Usage: python assignments/transformer_mt/build.py              # write student_template/ and dist/
#        python assignments/transformer_mt/build.py --data DIR   # ... and bundle Multi30k into the zip
#        python assignments/transformer_mt/build.py --check      # exit 1 if student_template/ is stale

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the project root first, so `assignments` imports
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from assignments.build import *  # noqa: F403  (the module interface tests and bench use)
from assignments.build import main

if __name__ == "__main__":
    sys.exit(main())
