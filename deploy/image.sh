#!/bin/sh
# Builds guidepub's container image from a binary built by `make build`, the
# way GoReleaser and ko do: the binary is copied into an image FROM scratch,
# nothing is compiled or pulled inside the build. Usage:
#
#   deploy/image.sh BINARY [TAG]       (make image runs it)
#
# The engine is podman or docker, whichever answers (GUIDEPUB_ENGINE picks
# one). The build context is a temporary folder holding only the Dockerfile
# and rootfs/.
set -eu

bin=${1:?usage: deploy/image.sh BINARY [TAG]}
tag=${2:-guidepub:latest}
here=$(cd "$(dirname "$0")" && pwd)
uid=65532 # the image's unprivileged user, as distroless names it: nonroot

engine=${GUIDEPUB_ENGINE:-}
if [ -z "$engine" ]; then
  for e in podman docker; do
    if command -v "$e" >/dev/null 2>&1 && "$e" info >/dev/null 2>&1; then engine=$e; break; fi
  done
fi
if [ -z "$engine" ]; then
  echo "deploy/image.sh: no working container engine (podman or docker); see docs/container.md" >&2
  exit 1
fi

if file_out=$(od -An -c -N 4 "$bin" 2>/dev/null) && ! echo "$file_out" | grep -q 'E   L   F'; then
  echo "deploy/image.sh: $bin is not an ELF binary" >&2
  exit 1
fi

certs=${GUIDEPUB_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
if [ ! -s "$certs" ]; then
  echo "deploy/image.sh: no CA certificates at $certs (Debian: apt-get install ca-certificates)" >&2
  exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
root=$ctx/rootfs
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp" \
  "$root/data/bundles" "$root/data/public" "$root/data/private"
cp "$bin" "$root/usr/local/bin/guidepub"
chmod 0755 "$root/usr/local/bin/guidepub"
cp "$certs" "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/data:/sbin/nologin\n' $uid $uid > "$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:%s:\n' $uid > "$root/etc/group"
chmod 1777 "$root/tmp"
# The /data folders belong to the runtime user, so a new volume mounted
# there is writable by it. Copying keeps numeric owners: set them here when
# allowed (root, or rootless podman's own namespace).
if ! chown -R $uid:$uid "$root/data" 2>/dev/null; then
  chmod -R 0777 "$root/data"
fi
cp "$here/Dockerfile" "$ctx/Dockerfile"

format=
[ "$engine" = podman ] && format="--format docker" # keeps HEALTHCHECK
# shellcheck disable=SC2086
"$engine" build $format --tag "$tag" "$ctx"
