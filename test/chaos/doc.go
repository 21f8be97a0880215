// Package chaos is `make chaos`: a runlet node on each backend, podman then runc, under pods created
// and deleted without pause while faults strike it at random (runlet, the podman service and the
// apiserver killed or stopped, simulated reboots with and without the apiserver, the pod network's
// ADD failing). After each fault, once the node settles, it checks what a node must never do: lose a
// pod the API holds, run a container twice, keep running what the API deleted, leave addresses,
// network namespaces, mounts or cgroups without a pod, or count a restart that no fault caused.
//
// Its tests do nothing unless RUNLET_CHAOS=1, so `go test ./...` skips them at once. The knobs and
// what each fault may do are in docs/chaos.md.
package chaos
