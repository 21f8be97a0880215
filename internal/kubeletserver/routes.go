package kubeletserver

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// The kubelet's streaming timeouts: an idle exec, attach or port-forward
// connection is closed after 4 h (--streaming-connection-idle-timeout), and
// a client has 30 s to open its streams after the upgrade.
const (
	StreamIdleTimeout     = 4 * time.Hour
	StreamCreationTimeout = 30 * time.Second
)

// Routes serves the kubelet API paths (logs, exec, attach, port-forward,
// pods, stats, metrics, /debug/pprof) on p. It is nodeutil.AttachProviderRoutes with one
// fix: virtual-kubelet v1.14.1's api.PodHandler hands the port-forward
// server its idle and creation timeouts swapped (a forward dies after 30 s
// idle, and a client that never opens its streams is waited for 4 h), so
// /portForward is routed here first with the timeouts the right way round.
func Routes(p nodeutil.Provider, apiPods corev1listers.PodLister) http.Handler {
	r := mux.NewRouter()
	r.StrictSlash(true)
	r.HandleFunc("/portForward/{namespace}/{pod}", api.HandlePortForward(p.PortForward,
		api.WithPortForwardStreamIdleTimeout(StreamIdleTimeout),
		api.WithPortForwardCreationTimeout(StreamCreationTimeout),
	)).Methods(http.MethodPost, http.MethodGet)
	r.PathPrefix(pprofBasePath).HandlerFunc(profiles)
	r.NotFoundHandler = api.PodHandler(api.PodHandlerConfig{
		RunInContainer:    p.RunInContainer,
		AttachToContainer: p.AttachToContainer,
		GetContainerLogs:  p.GetContainerLogs,
		GetPods:           p.GetPods,
		GetPodsFromKubernetes: func(context.Context) ([]*v1.Pod, error) {
			return apiPods.List(labels.Everything())
		},
		GetStatsSummary:       p.GetStatsSummary,
		GetMetricsResource:    p.GetMetricsResource,
		PortForward:           p.PortForward,
		StreamIdleTimeout:     StreamIdleTimeout,
		StreamCreationTimeout: StreamCreationTimeout,
	}, true)
	return r
}
