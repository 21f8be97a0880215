// Package health is runlet's /healthz: whether it can reach the apiserver
// and its container backend, and whether its PLEG keeps relisting. The
// chart's liveness and readiness probes use it, as the kubelet's own probes
// use the kubelet's healthz port.
package health

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/rest"
)

// checkTimeout bounds every check, below the chart's probe timeout.
const checkTimeout = 4 * time.Second

// Install serves /healthz (every check; ?verbose lists them) and
// /healthz/<check> (one check) on mux.
func Install(mux *http.ServeMux, checks ...healthz.HealthChecker) {
	healthz.InstallHandler(mux, checks...)
}

// APIServer checks that runlet reaches the apiserver with its own
// credentials: the apiserver's /healthz is open to every authenticated
// client, so an expired token fails this too.
func APIServer(c rest.Interface) healthz.HealthChecker {
	return healthz.NamedCheck("apiserver", func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		body, err := c.Get().AbsPath("/healthz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("apiserver unreachable: %w", err)
		}
		if string(body) != "ok" {
			return fmt.Errorf("apiserver not healthy: %.200s", body)
		}
		return nil
	})
}

// Pinger is the part of the backend the check needs.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Backend checks that the container backend answers.
func Backend(p Pinger) healthz.HealthChecker {
	return healthz.NamedCheck("backend", func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			return fmt.Errorf("container backend unreachable: %w", err)
		}
		return nil
	})
}

// Func wraps a check that needs no request, such as the PLEG's.
func Func(name string, check func() error) healthz.HealthChecker {
	return healthz.NamedCheck(name, func(*http.Request) error { return check() })
}
