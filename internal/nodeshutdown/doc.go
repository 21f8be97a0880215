// Package nodeshutdown is the kubelet's node shutdown manager: when the
// host shuts down, it stops the node's pods by priority group, regular pods
// before critical ones, each group within its share of shutdownGracePeriod,
// marks each pod as the kubelet does (Failed, reason Terminated, a
// DisruptionTarget condition), refuses new pods and makes the node NotReady.
//
// A node shutdown is told apart from a restart of runlet by its trigger:
// SIGTERM and SIGINT stop runlet and leave every pod running; a shutdown
// comes from logind's PrepareForShutdown where the system bus has logind
// (WatchLogind, with a delay inhibitor lock, as the kubelet), or from
// `runlet shutdown` over a unix socket under --root-dir (Serve, Request),
// which returns once the pods have stopped.
//
// After k8s.io/kubernetes v1.37.2 pkg/kubelet/nodeshutdown.
package nodeshutdown
