# The project's commands. Every target installs the pinned environment first (once).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
export MULTI30K_DIR ?= $(abspath ../shared/data/multi30k)
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: setup grade-examples test test-slow train-cpu bench gradescope-zip student-bundle

$(VENV)/.installed: requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, from its exact pin, so nothing else can pull another build of it.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements.lock
	touch $@

setup: $(VENV)/.installed

grade-examples: setup
	$(PY) -m autograder grade examples/*.ipynb --out grading-output

# PYTEST_ARGS: extra pytest options (CI passes --durations to log where the time goes).
test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

test-slow: setup
	$(PY) -m pytest -m slow

train-cpu: setup
	$(PY) -m reference.train --profile cpu --out runs/cpu

bench: setup
	$(PY) bench/data_prep.py

# Student notebook + public tests into student_template/ (committed), autograder zip into dist/.
.PHONY: template
template: setup
	$(PY) assignments/transformer_mt/build.py

# Gradescope autograder zip (setup.sh + run_autograder at its root), with Multi30k when available.
gradescope-zip:
	$(PYTHON) -m autograder.integrations.gradescope.build_zip --out dist/gradescope-autograder.zip \
		$(if $(wildcard $(MULTI30K_DIR)/train.de*),--data $(MULTI30K_DIR))

# Refresh the public-check runner copied into student_template/.github/autograding/.
student-bundle: setup
	$(PY) -m autograder.integrations.student_bundle --write
