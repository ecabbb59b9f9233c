#!/usr/bin/env bash
# The container engine for the grading image and `otter grade` (as root):
#   bash container/engine.sh install   # docker.io + debootstrap (apt), the buildx plugin (Debian trixie's .deb)
#   bash container/engine.sh start     # start dockerd unless one answers; records that this script started it
#   bash container/engine.sh stop      # stop the dockerd that `start` started (none other)
# dockerd runs with --bridge=none --iptables=false: no container ever gets an address (the project
# never creates container addresses in a private range); containers run with no network (Otter's
# --no-network) and builds need none (build-image.sh brings every file in its context).
set -euo pipefail
source "$(dirname "$0")/env.sh"
pidfile="$GRADING_IMAGE_CACHE/dockerd.pid"
mkdir -p "$GRADING_IMAGE_CACHE"

case "${1:-}" in
  install)
    if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
    fi
    plugin="$DOCKER_CONFIG/cli-plugins/docker-buildx"
    if [ ! -x "$plugin" ]; then
      # Debian 12 has no docker-buildx package; Debian 13's is a static Go binary (libc only). apt
      # fetches it with a list of its own (nothing added to the system's sources), and only the
      # plugin file is kept.
      apt_dir="$(mktemp -d)"
      trap 'rm -rf "$apt_dir"' EXIT
      mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
        > "$apt_dir/sources.list"
      apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
        -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::Archives=$apt_dir/archives"
        -o APT::Sandbox::User=root)
      apt-get "${apt_opts[@]}" update -qq
      (cd "$apt_dir" && apt-get "${apt_opts[@]}" download -qq docker-buildx)
      dpkg-deb -x "$apt_dir"/docker-buildx_*.deb "$apt_dir/x"
      mkdir -p "$(dirname "$plugin")"
      install -m 0755 "$apt_dir/x/usr/libexec/docker/cli-plugins/docker-buildx" "$plugin"
    fi
    docker buildx version
    ;;
  start)
    if docker info >/dev/null 2>&1; then
      echo "engine: a dockerd already answers; using it"
      exit 0
    fi
    dockerd --bridge=none --iptables=false --ip-forward=false --ip-masq=false --pidfile "$pidfile" \
      > "$GRADING_IMAGE_CACHE/dockerd.log" 2>&1 &
    for _ in $(seq 60); do
      if docker info >/dev/null 2>&1; then echo "engine: dockerd started (pid $(cat "$pidfile"))"; exit 0; fi
      sleep 1
    done
    echo "engine: dockerd did not answer in 60 s (log: $GRADING_IMAGE_CACHE/dockerd.log)" >&2
    exit 1
    ;;
  stop)
    if [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      pid="$(cat "$pidfile")"
      kill -TERM "$pid"
      for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      echo "engine: dockerd (pid $pid) stopped"
    fi
    ;;
  *)
    echo "usage: $0 install|start|stop" >&2
    exit 2
    ;;
esac
