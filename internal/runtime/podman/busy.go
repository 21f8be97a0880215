package podman

import (
	"context"
	"strings"
	"time"
)

// busyRetries bound the tries of a removal that podman's storage refused
// as busy, spread over about three seconds.
const busyRetries = 6

// retryBusy runs remove again while podman answers that a container's
// storage is busy. Podman 4 can find a container's shm or root filesystem
// still mounted a moment after its processes died ("unlinkat
// …/userdata/shm: device or resource busy", containers/podman#11594 and
// #17216), and leaves the container for a later removal, which succeeds.
func retryBusy(ctx context.Context, remove func() error) error {
	delay := 100 * time.Millisecond
	for i := 1; ; i++ {
		err := remove()
		if err == nil || i == busyRetries || !storageBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// storageBusy reports whether podman failed to remove a container's files
// because a mount below them was in use.
func storageBusy(err error) bool {
	return strings.Contains(err.Error(), "device or resource busy")
}
