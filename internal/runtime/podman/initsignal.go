package podman

import (
	"context"

	"github.com/runlet/runlet/internal/runtime/hostproc"
)

// StopSignalLost implements runtime.Lifecycle from the container's
// inspect and its main process's /proc entry.
func (b *Backend) StopSignalLost(ctx context.Context, id string) bool {
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil || !ic.State.Running || ic.State.Pid <= 0 {
		return false
	}
	sig := hostproc.SignalNumber(stopSignal(ic.Config.StopSignal))
	return sig > 0 && hostproc.InitDropsSignal(ic.State.Pid, ic.ID, sig)
}
