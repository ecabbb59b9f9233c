#!/usr/bin/env bash
# Build the grading image (`make grading-image`): Debian 12 (debootstrap, minbase) imported as a base
# image, then container/Dockerfile installs the project's pins into /opt/grading-venv from a local
# wheelhouse. Only the first debootstrap and the first wheel download use the network (Debian's
# mirror, pip's configured indexes); both are cached in $GRADING_IMAGE_CACHE, so later builds run
# offline, and the engine's layer cache makes an unchanged rebuild take seconds.
#
# Usage: bash container/build-image.sh          (as root; prints the image's size and the build time)
set -euo pipefail
cd "$(dirname "$0")/.."
source container/env.sh
start=$SECONDS
lock=requirements.lock
lock_id="$(sha256sum "$lock" container/Dockerfile | sha256sum | cut -c1-12)"
mkdir -p "$GRADING_IMAGE_CACHE"

# 1. The base: Debian 12 minbase with Python 3.11 and what Otter's Dockerfile installs (curl, unzip,
#    dos2unix, wget: already there, its `apt-get install` then needs no network).
if ! docker image inspect "$GRADING_BASE_IMAGE" >/dev/null 2>&1; then
  rootfs_tar="$GRADING_IMAGE_CACHE/bookworm-rootfs.tar"
  if [ ! -s "$rootfs_tar" ]; then
    # The mirror apt uses on this machine (deb822 sources or a one-line sources.list).
    mirror="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ && $2 ~ /debian\/?$/ { print $2; exit }')"
    mirror="${mirror:-$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)}"
    mirror="${mirror:-http://deb.debian.org/debian}"
    rootfs="$GRADING_IMAGE_CACHE/rootfs.tmp"
    rm -rf "$rootfs"
    debootstrap --variant=minbase \
      --include=python3.11,python3.11-venv,python3-venv,ca-certificates,curl,unzip,dos2unix,wget,procps \
      bookworm "$rootfs" "$mirror"
    # Files sorted, one timestamp: the same packages give the same archive.
    tar -C "$rootfs" --sort=name --numeric-owner --mtime='2025-01-01 00:00:00' -cf "$rootfs_tar.tmp" .
    mv "$rootfs_tar.tmp" "$rootfs_tar"
    rm -rf "$rootfs"
  fi
  docker import --change 'CMD ["/bin/bash"]' "$rootfs_tar" "$GRADING_BASE_IMAGE"
fi

# 2. The wheels of every pin (torch's CPU build included: pip finds it the way it is configured on
#    this machine, e.g. find-links; a course with internet access sets
#    PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu). Downloaded once per lock.
wheels="$GRADING_IMAGE_CACHE/wheels"
if [ ! -e "$wheels/.complete-$(sha256sum "$lock" | cut -c1-12)" ]; then
  mkdir -p "$wheels"
  pip=("${PYTHON:-.venv/bin/python}" -m pip download --quiet --only-binary=:all: -d "$wheels")
  "${pip[@]}" --no-deps -r "$lock"
  # What torch's wheel requires but the lock leaves to the environment (setuptools), and pip itself.
  "${pip[@]}" "$(grep -E '^torch==' "$lock")" pip
  touch "$wheels/.complete-$(sha256sum "$lock" | cut -c1-12)"
fi

# 3. The image, from a context of hard links (nothing copied) with no network at all.
context="$(mktemp -d "$GRADING_IMAGE_CACHE/context.XXXXXX")"
trap 'rm -rf "$context"' EXIT
cp container/Dockerfile "$lock" "$context/"
# Every wheel of the cache: the lock's, and what torch needs beside it (the install takes only what the
# lock names, with --no-index: no other build of anything can come in).
cp -al "$wheels" "$context/wheels" 2>/dev/null || cp -a "$wheels" "$context/wheels"
# BuildKit (buildx's docker driver) for the Dockerfile's RUN --mount; no network, nothing pulled.
docker buildx build --network none --build-arg "BASE_IMAGE=$GRADING_BASE_IMAGE" \
  -t "$GRADING_IMAGE" -t "${GRADING_IMAGE%:*}:$lock_id" "$context"
size="$(docker image inspect --format '{{.Size}}' "$GRADING_IMAGE")"
echo "grading image $GRADING_IMAGE (${GRADING_IMAGE%:*}:$lock_id): $((size / 1000000)) MB, built in $((SECONDS - start)) s"
