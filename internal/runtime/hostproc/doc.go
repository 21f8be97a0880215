// Package hostproc reads what the kernel of this host shows of a
// container's processes: the OOM kill counter of its memory cgroup, and
// whether the init of its PID namespace handles a signal. Both backends
// run their containers on this host (podman's local service, runc), where
// the cgroup files and /proc entries are in reach; callers pass the
// container's cgroup path, PID and ID as plain values. It also parses the
// proc files that the node's stats and the bench read: the host's CPU
// times, key-value files and interface counters.
package hostproc
