#!/usr/bin/env bash
# Builds Ambient's default sandbox image (the same as this directory's Dockerfile) without any
# image registry: debootstrap a minimal Debian bookworm from an apt mirror, add the `agent` user
# (uid/gid 1000) and /workspace, and `docker import` it.
#
# Usage: build-image.sh [--tag TAG] [--with-node] [--with-python] [--force]
#   --tag TAG       image to make (default ambient-agent:bookworm, AMBIENT_DOCKER_IMAGE's default)
#   --with-node     also install nodejs and npm
#   --with-python   also install python3
#   --force         rebuild even when TAG already exists (otherwise an existing TAG is kept)
# Environment: AMBIENT_DEBIAN_MIRROR (default: the host's apt mirror, see debian-mirror.sh).
# Needs root, debootstrap and a docker daemon.
set -euo pipefail

TAG=ambient-agent:bookworm
SUITE=bookworm
PACKAGES=bash,git,coreutils,curl,ripgrep,ca-certificates,procps
FORCE=0
SANDBOX_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

log() { printf '==> %s\n' "$*"; }
die() {
  printf 'build-image: %s\n' "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --tag)
      [ $# -ge 2 ] || die "--tag needs a value"
      TAG=$2
      shift 2
      ;;
    --tag=*)
      TAG=${1#--tag=}
      shift
      ;;
    --with-node)
      PACKAGES=$PACKAGES,nodejs,npm
      shift
      ;;
    --with-python)
      PACKAGES=$PACKAGES,python3
      shift
      ;;
    --force)
      FORCE=1
      shift
      ;;
    -h | --help)
      sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

command -v docker >/dev/null 2>&1 || die "docker is not installed"
docker info >/dev/null 2>&1 || die "the docker daemon does not answer (is dockerd running?)"

# The cache key is the tag and the package list: an image built from another list is rebuilt.
RECIPE="$SUITE:$PACKAGES"
if [ "$FORCE" = 0 ] &&
  [ "$(docker image inspect --format '{{ index .Config.Labels "dev.ambient.recipe" }}' "$TAG" 2>/dev/null)" = "$RECIPE" ]; then
  log "image $TAG exists"
  exit 0
fi

[ "$(id -u)" = 0 ] || die "debootstrap needs root"
MIRROR=$("$(dirname "$0")/debian-mirror.sh") || die "no Debian mirror (set AMBIENT_DEBIAN_MIRROR)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (apt-get install debootstrap)"

ROOTFS=$(mktemp -d "${TMPDIR:-/tmp}/ambient-agent-rootfs.XXXXXX")
cleanup() { rm -rf --one-file-system "$ROOTFS"; }
trap cleanup EXIT

log "debootstrap $SUITE ($PACKAGES) from $MIRROR"
if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOTFS" "$MIRROR" \
  >"$ROOTFS.log" 2>&1; then
  tail -n 30 "$ROOTFS.log" >&2 || true
  rm -f "$ROOTFS.log"
  die "debootstrap failed"
fi
rm -f "$ROOTFS.log"

log "agent user (1000:1000) and /workspace"
chroot "$ROOTFS" groupadd --gid 1000 agent
chroot "$ROOTFS" useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash agent
chmod 0755 "$ROOTFS"
install -d -o 1000 -g 1000 "$ROOTFS/workspace"
# What a container does not need: downloaded packages, package lists, logs.
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/log/*.log
# Docker provides these per container.
: >"$ROOTFS/etc/hostname"
: >"$ROOTFS/etc/resolv.conf"

log "docker import $TAG"
tar --numeric-owner -C "$ROOTFS" -c . |
  docker import \
    --change "ENV PATH=$SANDBOX_PATH" \
    --change 'USER 1000:1000' \
    --change 'WORKDIR /workspace' \
    --change 'CMD ["/bin/bash"]' \
    --change "LABEL dev.ambient.recipe=$RECIPE" \
    --message "ambient agent image: debootstrap $SUITE ($PACKAGES)" \
    - "$TAG" >/dev/null
log "built $TAG"
