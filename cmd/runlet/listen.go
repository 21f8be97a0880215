package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/runlet/runlet/internal/health"
	"github.com/runlet/runlet/internal/kubelet"
	"github.com/sirupsen/logrus"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/kubernetes"
)

// listenEarly makes sure both of runlet's ports are free before anything
// else starts, so a clash is one clear fatal error. The metrics listener is
// kept and served later; the kubelet API's is released for the framework,
// which binds it itself when the node starts.
func listenEarly(o *options) (metrics net.Listener, err error) {
	kubeletAddr := net.JoinHostPort(o.Address, strconv.Itoa(int(o.KubeletPort)))
	l, err := net.Listen("tcp", kubeletAddr)
	if err != nil {
		return nil, portError("--kubelet-port", kubeletAddr, err)
	}
	_ = l.Close()
	if o.MetricsAddr == "" {
		return nil, nil
	}
	metrics, err = net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		return nil, portError("--metrics-addr", o.MetricsAddr, err)
	}
	return metrics, nil
}

func portError(flag, addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s: %s is already in use (by a kubelet or another runlet on this host?); choose a free port", flag, addr)
	}
	return fmt.Errorf("%s: cannot listen on %s: %w", flag, addr, err)
}

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
func healthChecks(client kubernetes.Interface, backend health.Pinger, c *kubelet.Kubelet) []healthz.HealthChecker {
	return []healthz.HealthChecker{
		health.APIServer(client.Discovery().RESTClient()),
		health.Backend(backend),
		health.Func("pleg", c.PLEGHealth),
	}
}
