#!/usr/bin/env bash
# The project's zip builder (assignments/build.py) puts these lines before Otter's own
# run_autograder (the rest of this file).
# Otter 7's Dockerfile (`otter grade`) leaves /autograder/submission_metadata.json empty, and its
# runner reads that file as JSON whenever the autograder has a plugin (this one has): an empty object
# is what the file means there. Gradescope writes the real metadata, which is kept.
[ -s /autograder/submission_metadata.json ] || echo '{}' > /autograder/submission_metadata.json
# On the project's grading image the zip's setup.sh installed nothing (see its first lines): Otter
# runs with the image's environment. Elsewhere Otter's lines below start its Miniforge environment.
if [ -x /opt/grading-venv/bin/python ] && [ ! -e /root/miniforge3 ]; then
  exec /opt/grading-venv/bin/python /autograder/source/run_otter.py
fi
