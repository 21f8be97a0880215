package provider

import (
	"context"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// GetStatsSummary returns the node's /stats/summary.
func (p *Provider) GetStatsSummary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{NodeName: p.cfg.NodeName, StartTime: metav1.NewTime(startTime)},
	}, nil
}

// GetMetricsResource returns the node's /metrics/resource families.
func (p *Provider) GetMetricsResource(ctx context.Context) ([]*dto.MetricFamily, error) {
	return nil, nil
}

var startTime = time.Now()
