// Package deploy holds guidepub's container image (Dockerfile and
// image.sh, which `make image` runs), the example deployment (compose.yaml
// and nginx.conf) and their tests: the image is built with podman or docker,
// and sidecar and watch are run in it against the host's PostgreSQL and
// folders. It has no Go code of its own. See docs/container.md.
package deploy
