"""Runs Otter-Grader's autograding once the upload is out of Otter's reach (see docs/OTTER.md)."""

# The zip builder (assignments/build.py) puts this file in the zip in place of Otter's run_otter.py,
# which run_autograder starts on Gradescope and in `otter grade`.
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parent  # <autograder>/source: the zip, never the upload
sys.path[:0] = [str(SOURCE)]

from otter.run.run_autograder import main as run_autograder  # noqa: E402

from autograder.otter_bridge import prepare_upload  # noqa: E402

if __name__ == "__main__":
    prepare_upload(SOURCE.parent)
    run_autograder(str(SOURCE.parent))
