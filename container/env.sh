# Sourced by the container scripts (and read by tests/containers): where the engine's pieces live.
#
# The engine is Docker: Debian's docker.io (dockerd 20.10) with the buildx CLI plugin from Debian's
# own docker-buildx package (engine.sh install fetches it; bookworm has none, trixie has 0.13). Otter 7
# builds its image with `docker buildx build` (python_on_whales), so with the plugin Otter's own
# code runs unmodified: nothing rewrites its calls. The plugin lives in $DOCKER_CONFIG/cli-plugins,
# a folder of this project's cache, so the system's docker set-up is left as it is.
export GRADING_IMAGE_CACHE="${GRADING_IMAGE_CACHE:-/var/cache/grading-image}"
export DOCKER_CONFIG="${DOCKER_CONFIG:-$GRADING_IMAGE_CACHE/docker-config}"
# The image build-image.sh makes, and the base it starts from (both local: nothing is pulled).
export GRADING_BASE_IMAGE="${GRADING_BASE_IMAGE:-grading-base:bookworm}"
export GRADING_IMAGE="${GRADING_IMAGE:-transformer-grading:latest}"
