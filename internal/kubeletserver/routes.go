package kubeletserver

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gorilla/mux"
	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The kubelet's streaming timeouts: an idle exec, attach or port-forward
// connection is closed after 4 h (--streaming-connection-idle-timeout), and
// a client has 30 s to open its streams after the upgrade.
const (
	StreamIdleTimeout     = 4 * time.Hour
	StreamCreationTimeout = 30 * time.Second
)

// Streams is what the kubelet API's container and stats paths ask of the
// node (internal/streaming).
type Streams interface {
	GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error)
	RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach api.AttachIO) error
	AttachToContainer(ctx context.Context, namespace, podName, containerName string, attach api.AttachIO) error
	GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error)
	GetMetricsResource(context.Context) ([]*dto.MetricFamily, error)
	PortForward(ctx context.Context, namespace, pod string, port int32, stream io.ReadWriteCloser) error
}

// Routes serves the kubelet API paths (logs, exec, attach, port-forward,
// pods, stats, metrics, /debug/pprof): the streams and stats on p, /pods
// from pods (the node's pods with their statuses) and apiPods. It is virtual-kubelet's AttachProviderRoutes with one
// fix: virtual-kubelet v1.14.1's api.PodHandler hands the port-forward
// server its idle and creation timeouts swapped (a forward dies after 30 s
// idle, and a client that never opens its streams is waited for 4 h), so
// /portForward is routed here first with the timeouts the right way round.
func Routes(p Streams, pods func(context.Context) ([]*v1.Pod, error), apiPods corev1listers.PodLister) http.Handler {
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
		GetPods:           pods,
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
