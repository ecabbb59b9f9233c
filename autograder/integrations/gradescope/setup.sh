#!/usr/bin/env bash
# Gradescope runs this once, as root, while building the autograder image (Ubuntu base image),
# with the zip unpacked in /autograder/source. It installs Python 3.11 and the pinned grading
# environment (the CPU torch wheel) into /autograder/venv, and hides the grader's own files
# (hidden checks, reference solution) from the unprivileged user the sandbox runs student code as.
set -euo pipefail

source_dir="${AUTOGRADER_SOURCE:-/autograder/source}"
venv="${AUTOGRADER_VENV:-/autograder/venv}"
export DEBIAN_FRONTEND=noninteractive

if ! command -v python3.11 >/dev/null 2>&1; then
  apt-get update
  # Ubuntu 22.04 has python3.11 in universe; 24.04 does not, so fall back to the deadsnakes PPA.
  if ! apt-get install -y --no-install-recommends python3.11 python3.11-venv; then
    apt-get install -y --no-install-recommends software-properties-common
    add-apt-repository -y ppa:deadsnakes/ppa
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
  fi
fi
apt-get install -y --no-install-recommends util-linux >/dev/null 2>&1 || true   # unshare, for the sandbox

# The project's grading image (container/build-image.sh) holds this lock's environment already in
# /opt/grading-venv: use it and download nothing (a course behind a firewall builds there).
grading_venv=/opt/grading-venv
if [ -x "$grading_venv/bin/python" ] && cmp -s "$source_dir/requirements.lock" "$grading_venv/requirements.lock"; then
  ln -sfn "$grading_venv" "$venv"
else
  python3.11 -m venv "$venv"
  "$venv/bin/python" -m pip install --upgrade pip
  PYTHON="$venv/bin/python" bash "$source_dir/autograder/integrations/install_env.sh" cpu
fi

# The assignment's data bundled by `build_zip --data` (under data/): keep a world-readable copy
# outside the hidden source; run_autograder points the assignment's variable at it.
if [ -d "$source_dir/data" ]; then
  mkdir -p /autograder/data
  cp -r "$source_dir/data/." /autograder/data/
  chmod -R a+rX /autograder/data
fi

# Student code runs as an unprivileged user: it must be able to use the venv, not read the grader.
chmod -R go-rwx "$source_dir"
chmod -R go+rX "$venv"
chmod +x "$source_dir/run_autograder" 2>/dev/null || true

cd "$source_dir"
"$venv/bin/python" -m autograder validate-config
