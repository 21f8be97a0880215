package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// runlet's own metrics, named after the kubelet's where one exists.
var (
	PLEGRelistDuration = promauto.NewHistogram(prometheus.HistogramOpts{
		Name:    "runlet_pleg_relist_duration_seconds",
		Help:    "Duration of a PLEG relist of the backend.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	})
	PLEGLastSeen = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "runlet_pleg_last_seen_seconds",
		Help: "Unix time of the last successful relist.",
	})
	PodWorkerDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "runlet_pod_worker_duration_seconds",
		Help:    "Duration of one pod worker step, by operation (sync, terminating, terminated).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
	}, []string{"operation"})
	PodWorkerErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "runlet_pod_worker_errors_total",
		Help: "Pod worker steps that failed, by operation.",
	}, []string{"operation"})
	RunningContainers = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "runlet_running_containers",
		Help: "Containers the last relist found running.",
	})
	RunningPods = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "runlet_running_pods",
		Help: "Pods with a sandbox in the last relist.",
	})
	// The runtime operations are every call to the backend, whichever it
	// is (internal/runtime/instrumented), as the kubelet's are its CRI calls.
	RuntimeOperations = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "runlet_runtime_operations_total",
		Help: "Calls to the backend, by operation.",
	}, []string{"operation"})
	RuntimeOperationDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "runlet_runtime_operations_duration_seconds",
		Help: "Duration of calls to the backend until it answered, by operation; " +
			"streams are timed until set up (exec until its command runs), or not at all when the client decides their length.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
	}, []string{"operation"})
	RuntimeOperationErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "runlet_runtime_operations_errors_total",
		Help: "Calls to the backend that failed, by operation.",
	}, []string{"operation"})
)

// The kubelet's own names, which the upstream user namespace specs read
// from the node's /metrics.
var (
	StartedUserNamespacedPods = promauto.NewCounter(prometheus.CounterOpts{
		Name: "kubelet_started_user_namespaced_pods_total",
		Help: "Sandboxes of pods with hostUsers: false that were to be created.",
	})
	StartedUserNamespacedPodsErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "kubelet_started_user_namespaced_pods_errors_total",
		Help: "Syncs that created (or tried to create) the sandbox of a pod with hostUsers: false and failed.",
	})
)
