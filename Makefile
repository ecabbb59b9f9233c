# The project's commands. Every target installs the pinned environment first (once).
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
export MULTI30K_DIR ?= $(abspath ../shared/data/multi30k)
export OMP_WAIT_POLICY ?= PASSIVE
# torch's exact pin, written once: in requirements.lock.
TORCH_PIN := $(shell grep -E '^torch==' requirements.lock)

.PHONY: setup grade-examples test test-slow test-e2e lint train-cpu bench gradescope-zip student-bundle

# setup.py and the hook it installs are prerequisites too: an existing environment gets a changed (or renamed)
# hook; reinstalling removes the files of the previous installation (e.g. a hook under its earlier name).
$(VENV)/.installed: requirements.lock requirements-dev.lock setup.py autograder/integrations/otter_hook.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, from its exact pin, so nothing else can pull another build of it.
	$(PY) -m pip install --quiet "$(TORCH_PIN)"
	$(PY) -m pip install --quiet -r requirements.lock
	# The development tools (ruff, mypy, pre-commit, pytest-xdist): `make lint`, parallel tests.
	$(PY) -m pip install --quiet -r requirements-dev.lock
	# The project itself, editable (no copies: the sandbox hides the checkout from student code), so
	# that `autograder` is importable from any folder, e.g. by the bare `otter run` command's plugin;
	# it also installs the start-up hook that lets `otter run` read notebooks Otter's reader rejects.
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

setup: $(VENV)/.installed

grade-examples: setup
	$(PY) -m autograder grade examples/*.ipynb --out grading-output

# PYTEST_ARGS: extra pytest options (CI passes --durations to log where the time goes).
test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

test-slow: setup
	$(PY) -m pytest -m slow

# The end-to-end gradings (soundness corpus, `otter run`, tiny trainings): outside the default suite.
test-e2e: setup
	$(PY) -m pytest -m "e2e and not slow"

# Lint, format check and type check, as .ci/run runs them.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	for f in $$(find tests assignments -name conftest.py -o -name build_fixtures.py | sort); do $(VENV)/bin/mypy "$$f" || exit 1; done

train-cpu: setup
	$(PY) -m assignments.transformer_mt.reference_training --profile cpu --out runs/cpu

bench: setup
	$(PY) bench/data_prep.py

# Student notebook + public tests into student_template/ (committed), autograder zip into dist/, for
# every assignment folder (assignments/*/assignment.yml), or one: `make template ASSIGNMENT=NAME`.
ASSIGNMENT ?= $(notdir $(patsubst %/,%,$(dir $(wildcard assignments/*/assignment.yml))))
.PHONY: template
template: setup
	for name in $(ASSIGNMENT); do $(PY) -m assignments.build --assignment $$name || exit 1; done

# Gradescope autograder zip (setup.sh + run_autograder at its root), with Multi30k when available.
gradescope-zip: setup
	$(PY) -m autograder.integrations.gradescope.build_zip --out dist/gradescope-autograder.zip \
		$(if $(wildcard $(MULTI30K_DIR)/train.de*),--data $(MULTI30K_DIR))

# The grading image for `otter grade --image` and Gradescope-style containers (docs/OTTER.md): Debian 12,
# Python 3.11 and requirements.lock in /opt/grading-venv, built with podman, offline after the first run.
.PHONY: grading-image
grading-image: setup
	bash container/build-image.sh

# Refresh the public-check runner copied into student_template/.github/autograding/.
student-bundle: setup
	$(PY) -m autograder.integrations.student_bundle --write
