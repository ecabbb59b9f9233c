#!/usr/bin/env bash
# The zip builder (assignments/build.py) puts these lines before Otter's own setup.sh (the
# rest of this file). On the project's grading image (container/build-image.sh), whose
# /opt/grading-venv holds exactly the pins of this zip's environment.yml, nothing is downloaded or
# installed: Otter runs in that environment (the zip's run_autograder says so too) and Otter's lines
# below (Miniforge, conda) are skipped. On any other image (Gradescope's, Otter's stock Ubuntu) they
# run as Otter wrote them.
grading_venv=/opt/grading-venv
# The exact pins (name==version, lower case, sorted) of environment.yml's pip list and of the lock.
yml_pins() { sed -n 's/^[[:space:]]*-[[:space:]]*\([A-Za-z0-9_.-]*==[^[:space:]]*\)[[:space:]]*$/\1/p' "$1" | tr A-Z a-z | sort; }
lock_pins() { grep -vE '^[[:space:]]*(#|-|$)' "$1" | tr A-Z a-z | sort; }
if [ -x "$grading_venv/bin/python" ] && [ -f "$grading_venv/requirements.lock" ] &&
  [ "$(yml_pins /autograder/source/environment.yml)" = "$(lock_pins "$grading_venv/requirements.lock")" ]; then
  echo "setup.sh: $grading_venv (the grading image) has this zip's pins: nothing to install"
  exit 0
fi
unset -f yml_pins lock_pins
