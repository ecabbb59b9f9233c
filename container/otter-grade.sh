#!/usr/bin/env bash
# `otter grade` on this machine kind, as a TA runs it (docs/OTTER.md): the project's environment's
# Otter, the buildx plugin (env.sh) and the build-network shim (otter-docker/docker) on PATH.
#   bash container/otter-grade.sh -n transformer_mt -a dist/autograder.zip -o grades/ \
#        --image transformer-grading:latest --no-network --containers 2 submissions/
set -euo pipefail
container_dir="$(cd "$(dirname "$0")" && pwd)"
source "$container_dir/env.sh"
export PATH="$container_dir/otter-docker:$PATH"
exec "${OTTER:-$container_dir/../.venv/bin/otter}" grade "$@"
