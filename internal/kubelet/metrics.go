package kubelet

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/runlet/runlet/internal/health"
	"github.com/sirupsen/logrus"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
)

// serveMetrics serves runlet's Prometheus /metrics and /healthz on l.
func serveMetrics(ctx context.Context, l net.Listener, checks []healthz.HealthChecker, log *logrus.Entry) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	health.Install(mux, checks...)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.WithError(err).Error("metrics server stopped")
	}
}

// healthChecks are what /healthz reports: the apiserver connection, the
// backend, and the PLEG (as the kubelet's healthz does).
func healthChecks(client kubernetes.Interface, backend health.Pinger, c *Kubelet) []healthz.HealthChecker {
	return []healthz.HealthChecker{
		health.APIServer(client.Discovery().RESTClient()),
		health.Backend(backend),
		health.Func("pleg", c.PLEGHealth),
	}
}
