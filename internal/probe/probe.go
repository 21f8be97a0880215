// Package probe holds the checks behind the kubelet's probes and lifecycle
// handlers: an exec in the container, an HTTP GET, a TCP connect and a gRPC
// health call, each sent by runlet itself into the pod's network, so an image
// needs neither curl nor nc. It mirrors k8s.io/kubernetes/pkg/probe; the
// prober (workers, thresholds, events) and the hook runner build on it.
package probe

// Result is the outcome of one check.
type Result string

// Results, as the kubelet's.
const (
	Success Result = "success"
	// Warning is a success with something worth telling (e.g. a redirect to
	// another host that was not followed).
	Warning Result = "warning"
	Failure Result = "failure"
	// Unknown is a check that could not run (bad port, bad request); it
	// comes with an error.
	Unknown Result = "unknown"
)

// UserAgent is what probes send, as the kubelet's "kube-probe/<major>.<minor>"
// for the Kubernetes API level runlet follows.
func UserAgent(purpose string) string { return "kube-" + purpose + "/" + kubeMinorVersion }

// kubeMinorVersion is the kubelet release whose behaviour runlet follows.
const kubeMinorVersion = "1.37"
