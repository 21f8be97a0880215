// Package conmon reads and drives what conmon, the monitor that podman and
// CRI-O start beside each container, keeps on disk: the exit files it
// writes to its exit directory, the "oom" mark in the container's bundle,
// the control FIFO that reopens the container's log, and the k8s-file log
// itself. Any backend whose containers run under conmon uses it; the
// callers know their own container IDs, bundles and paths, and pass them
// in as plain values.
package conmon
