// Package libpodtest is a fake libpod service for tests: canned answers by
// route on a unix socket, the requests it was sent, and podman's framing of
// exec and attach streams. Package libpod tests its client on it, package
// podman its backend; neither needs a real podman.
package libpodtest
