package podman

import (
	"context"
	"errors"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// Stats samples resource usage. No IDs means every running runlet-managed
// container. podman fails the whole call when one container is not running,
// so a failed batch is retried one by one and the failures are left out.
func (b *Backend) Stats(ctx context.Context, ids []string) ([]runtime.ContainerStats, error) {
	if len(ids) == 0 {
		var err error
		if ids, err = b.runningIDs(ctx); err != nil || len(ids) == 0 {
			return nil, err
		}
	}
	st, err := b.client.Stats(ctx, ids)
	if err != nil && len(ids) > 1 {
		st, err = b.statsOneByOne(ctx, ids)
	}
	if err != nil {
		return nil, wrapf(err, "stats")
	}
	now := time.Now()
	out := make([]runtime.ContainerStats, 0, len(st))
	for _, s := range st {
		out = append(out, toStats(s, now))
	}
	return out, nil
}

func (b *Backend) statsOneByOne(ctx context.Context, ids []string) ([]libpod.Stats, error) {
	var out []libpod.Stats
	var firstErr error
	for _, id := range ids {
		st, err := b.client.Stats(ctx, []string{id})
		if err != nil {
			if firstErr == nil && !errors.Is(err, runtime.ErrNotFound) {
				firstErr = err
			}
			continue
		}
		out = append(out, st...)
	}
	if len(out) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func (b *Backend) runningIDs(ctx context.Context) ([]string, error) {
	list, err := b.client.ListContainers(ctx, b.managedFilter())
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range list {
		if !c.IsInfra && c.State == "running" {
			ids = append(ids, c.ID)
		}
	}
	return ids, nil
}

// toStats maps podman's figures. podman reports one memory figure (usage
// without the page cache on cgroup v1 and v2), which is what kubelet calls
// the working set, so it fills both.
func toStats(s libpod.Stats, now time.Time) runtime.ContainerStats {
	return runtime.ContainerStats{
		ID: s.ContainerID, Time: now, CPUNanos: s.CPUNano,
		MemoryUsageBytes: s.MemUsage, MemoryWorkingSet: s.MemUsage, MemoryLimitBytes: s.MemLimit,
		NetRxBytes: s.NetInput, NetTxBytes: s.NetOutput,
		ProcessCount: s.PIDs,
	}
}
