package podman

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// StopContainer sends the container's stop signal, waits up to grace for it
// to exit, then kills it. It does not use podman's own stop, which marks the
// container "stopping" for the whole grace period: podman refuses exec
// sessions into a stopping container, while on the kubelet a terminating
// container stays reachable. Its readiness probe must still turn it
// unready, and `kubectl exec` must still work.
func (b *Backend) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	if grace <= 0 {
		return wrapf(b.client.StopContainer(ctx, id, 0), "stopping container %s", shortID(id))
	}
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil {
		return wrapf(err, "stopping container %s", shortID(id))
	}
	if !ic.State.Running {
		return nil
	}
	if err := b.client.KillContainer(ctx, id, stopSignal(ic.Config.StopSignal)); err != nil {
		// It may have exited meanwhile; podman's stop sorts that out.
		return wrapf(b.client.StopContainer(ctx, id, 0), "stopping container %s", shortID(id))
	}
	wctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	_, err = b.client.WaitContainer(wctx, id, "stopped")
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case !errors.Is(wctx.Err(), context.DeadlineExceeded):
		return wrapf(err, "waiting for container %s to stop", shortID(id))
	}
	// The grace period is over: SIGKILL, and podman cleans up.
	return wrapf(b.client.StopContainer(ctx, id, 0), "stopping container %s", shortID(id))
}

// stopSignal is the inspect report's stop signal as the kill API takes it:
// podman 4 reports a number, podman 5 a name; SIGTERM when unset.
func stopSignal(raw json.RawMessage) string {
	var n int
	if json.Unmarshal(raw, &n) == nil && n > 0 {
		return strconv.Itoa(n)
	}
	var name string
	if json.Unmarshal(raw, &name) == nil && name != "" {
		return name
	}
	return "SIGTERM"
}
