#!/usr/bin/env bash
# The project's zip builder (assignments/build.py) puts these lines before Otter's own
# run_autograder (the rest of this file). On the project's grading image the zip's setup.sh installed
# nothing (see its first lines): Otter runs with the image's environment. Elsewhere Otter's lines
# below start its Miniforge environment as usual.
if [ -x /opt/grading-venv/bin/python ] && [ ! -e /root/miniforge3 ]; then
  exec /opt/grading-venv/bin/python /autograder/source/run_otter.py
fi
