// Package portforward carries a kubelet port-forward stream to a port of a
// pod: it dials the port on the loopback inside the pod's network
// namespace, as the kubelet's CRI runtimes do, so that servers bound to
// 127.0.0.1 are reached too, and copies both ways until both sides are
// done. Any backend whose pods have a network namespace on this host uses
// it with the namespace's path.
package portforward
