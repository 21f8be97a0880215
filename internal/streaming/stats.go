package streaming

import (
	"context"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// StatsSource computes the node's stats; internal/stats.Collector is one.
type StatsSource interface {
	Summary(ctx context.Context) (*statsv1alpha1.Summary, error)
	ResourceMetrics(ctx context.Context) []*dto.MetricFamily
}

// GetStatsSummary returns the node's /stats/summary.
func (s *Server) GetStatsSummary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	if s.cfg.Stats == nil {
		return nil, errdefs.NotFound("stats are not collected on this node")
	}
	return s.cfg.Stats.Summary(ctx)
}

// GetMetricsResource returns the node's /metrics/resource families.
func (s *Server) GetMetricsResource(ctx context.Context) ([]*dto.MetricFamily, error) {
	if s.cfg.Stats == nil {
		return nil, errdefs.NotFound("stats are not collected on this node")
	}
	return s.cfg.Stats.ResourceMetrics(ctx), nil
}
