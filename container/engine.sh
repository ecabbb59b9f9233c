# Sourced by the container scripts and tests: podman as the engine, as Otter needs it.
#
# Otter 7 builds its image with `docker buildx build` (python_on_whales). Debian's docker.io has no
# buildx plugin and no registry reachable here ships one; podman answers the docker command line,
# `buildx build` included. So Otter is given podman under the name `docker` (the folder
# podman-as-docker/ holds one link, docker -> /usr/bin/podman: what Debian's podman-docker package
# installs as /usr/bin/docker, kept out of the system so that docker.io's CLI stays as it is).
# Otter's own code runs unmodified; nothing rewrites its calls. CONTAINERS_CONF: containers.conf
# beside this file (no network unless asked, never a pull).
_container_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CONTAINERS_CONF="$_container_dir/containers.conf"
case ":$PATH:" in
  *":$_container_dir/podman-as-docker:"*) ;;
  *) export PATH="$_container_dir/podman-as-docker:$PATH" ;;
esac
# The image build-image.sh makes, and the base it starts from (both local: nothing is pulled).
export GRADING_BASE_IMAGE="${GRADING_BASE_IMAGE:-localhost/grading-base:bookworm}"
export GRADING_IMAGE="${GRADING_IMAGE:-localhost/transformer-grading:latest}"
export GRADING_IMAGE_CACHE="${GRADING_IMAGE_CACHE:-/var/cache/grading-image}"
unset _container_dir
