// Package eviction is the kubelet's eviction manager (pkg/kubelet/eviction)
// for a runlet node: it reads the node's signals (memory.available,
// nodefs.available, nodefs.inodesFree, imagefs.available,
// imagefs.inodesFree, pid.available) from the stats summary every 10 s,
// compares them with the --eviction-hard thresholds, reports the
// MemoryPressure, DiskPressure and PIDPressure conditions (held for
// --eviction-pressure-transition-period after a signal clears), and under
// pressure evicts one pod per round, ranked by the kubelet's rank functions.
//
// The signals, thresholds, observations, rank functions and messages are
// ported from the kubelet v1.37.2; those files keep its licence header and
// say where they came from. What runlet leaves out: soft thresholds and
// minimum reclaim (their parsing is ported; only --eviction-hard is a flag),
// memcg threshold notifiers, allocatable memory thresholds (runlet enforces
// no node allocatable cgroup), image and container garbage collection before
// evicting, and separate containerfs signals (podman keeps containers'
// writable layers with the images, so containerfs is always the imagefs).
package eviction
