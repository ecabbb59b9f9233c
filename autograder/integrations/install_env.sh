#!/usr/bin/env bash
# Install the pinned grading environment into one Python: torch first, then requirements.lock.
#
#   bash autograder/integrations/install_env.sh cpu    # CPU wheel from the PyTorch CPU index
#   bash autograder/integrations/install_env.sh cuda   # PyPI's Linux wheel (built with CUDA)
#
# PYTHON picks the interpreter (default: python). torch goes first, from its exact pin, so that
# nothing else can pull another build of it; the lock's own torch line (the +cpu build) is left
# out of the second install so that a CUDA build stays in place.
set -euo pipefail

variant="${1:-cpu}"
python="${PYTHON:-python}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lock="$root/requirements.lock"
torch_pin="$(grep -E '^torch==' "$lock")"
torch_version="${torch_pin#torch==}"
torch_version="${torch_version%%+*}"

case "$variant" in
  cpu)  "$python" -m pip install "torch==${torch_version}" --index-url https://download.pytorch.org/whl/cpu ;;
  cuda) "$python" -m pip install "torch==${torch_version}" ;;
  *)    echo "usage: $0 cpu|cuda" >&2; exit 2 ;;
esac

rest="$(mktemp)"
trap 'rm -f "$rest"' EXIT
grep -vE '^torch==' "$lock" > "$rest"
"$python" -m pip install -r "$rest"
