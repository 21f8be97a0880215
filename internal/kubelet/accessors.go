package kubelet

import (
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/mirror"
	"github.com/runlet/runlet/internal/nodeshutdown"
	"github.com/runlet/runlet/internal/stats"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
)

// Source is the api pod-config source: the provider hands it the
// framework's pods.
func (k *Kubelet) Source() *apisource.Source { return k.source }

// Status is the status manager, the one writer of pods' statuses.
func (k *Kubelet) Status() *status.Manager { return k.status }

// Mirror is the mirror pod manager of static pods.
func (k *Kubelet) Mirror() *mirror.Manager { return k.mirror }

// Stats is the node's summary collector.
func (k *Kubelet) Stats() *stats.Collector { return k.stats }

// Pressure is the node's pressure conditions, as eviction observes them.
func (k *Kubelet) Pressure() []v1.NodeConditionType { return k.eviction.Pressure() }

// Shutdown is the node shutdown manager.
func (k *Kubelet) Shutdown() *nodeshutdown.Manager { return k.shutdown }

// PLEGHealth fails while the PLEG has not relisted for too long, as the
// kubelet's runtime health check.
func (k *Kubelet) PLEGHealth() error {
	if ok, since := k.pleg.Healthy(); !ok {
		return fmt.Errorf("PLEG is not healthy: pleg was last seen active %s ago", since.Round(time.Second))
	}
	return nil
}
