package kubelet

import (
	"path/filepath"
	"time"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/checkpoint"
	"github.com/runlet/runlet/internal/status"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
)

// CheckpointDir is where the node's checkpoint lives under --root-dir.
func CheckpointDir(rootDir string) string { return filepath.Join(rootDir, "checkpoint") }

// openCheckpoint opens the node's checkpoint; nil when offline start is off.
func openCheckpoint(cfg Config, log *logrus.Entry) (*checkpoint.Store, error) {
	if cfg.OfflineStartAfter <= 0 {
		return nil, nil
	}
	return checkpoint.Open(CheckpointDir(cfg.RootDir), log.WithField("component", "checkpoint"))
}

// apiSourceConfig is the api source's config: with a checkpoint, it keeps
// the API's pods there and runs them from there when the API has not
// answered by OfflineStartAfter; once the API answers, the statuses of the
// outage are compared with the API's at once.
func apiSourceConfig(o Config, d Deps, updates chan<- []*v1.Pod, sm *status.Manager) apisource.Config {
	c := apisource.Config{Updates: updates, Pods: d.Pods}
	if d.Checkpoint == nil {
		return c
	}
	started := o.Started
	if started.IsZero() {
		started = time.Now()
	}
	c.Checkpoint, c.OfflineAt, c.Online = d.Checkpoint, started.Add(o.OfflineStartAfter), sm.ReconcileNow
	c.Log = d.Log.WithField("component", "apisource")
	return c
}

// checkpointStatus keeps the statuses the status manager writes in the
// checkpoint; nil without one.
func checkpointStatus(cp *checkpoint.Store) func(*v1.Pod) {
	if cp == nil {
		return nil
	}
	return cp.SetStatus
}

// keepNode keeps the node's object in the checkpoint; nil without one.
func (k *Kubelet) keepNode() func(*v1.Node) {
	if k.checkpoint == nil {
		return nil
	}
	return k.checkpoint.SetNode
}
