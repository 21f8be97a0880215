package podman

import (
	"context"
	"fmt"

	"github.com/runlet/runlet/internal/runtime/conmon"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// logFilePath is the container's k8s-file log, or "" for another driver.
func logFilePath(ic libpod.InspectContainer) string {
	if ic.HostConfig.LogConfig.Type != "k8s-file" {
		return ""
	}
	return ic.HostConfig.LogConfig.Path
}

// ReopenContainerLog makes the container's conmon write to a new file at the
// log's path, through the control FIFO in the container's bundle.
func (b *Backend) ReopenContainerLog(ctx context.Context, id string) error {
	d, err := b.detail(ctx, id)
	if err != nil {
		return err
	}
	if d.staticDir == "" {
		return fmt.Errorf("container %s has no bundle directory", shortID(id))
	}
	if err := conmon.ReopenLog(d.staticDir); err != nil {
		return fmt.Errorf("conmon control of container %s: %w", shortID(id), err)
	}
	return nil
}

// detail is the cached inspect detail of a container, inspecting it when
// the cache has none.
func (b *Backend) detail(ctx context.Context, id string) (ctrDetail, error) {
	b.mu.Lock()
	d, ok := b.details[id]
	b.mu.Unlock()
	if ok {
		return d, nil
	}
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil {
		return ctrDetail{}, wrapf(err, "inspecting container %s", shortID(id))
	}
	return ctrDetail{staticDir: ic.StaticDir, logPath: logFilePath(ic), rootfsDir: ic.GraphDriver.Data.UpperDir}, nil
}
