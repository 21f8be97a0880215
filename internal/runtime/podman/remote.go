package podman

import "github.com/runlet/runlet/internal/runtime"

// Remote reports whether the podman service runs on another host.
func (b *Backend) Remote() bool { return b.remote }

// parallelPodStarts is how many pods podman is fed at once. podman
// serialises much of a start on its own locks: a burst of pods started all
// together finishes later than four at a time (make bench: 0.80-0.88 of raw
// podman's burst rate against 0.73-0.74 unbounded).
const parallelPodStarts = 4

// Capabilities implements runtime.Status. A local podman's conmon exit
// files, /proc and log files are runlet's to read; a remote one's are not.
func (b *Backend) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{
		Processes:      true,
		PodList:        true,
		ExitHints:      !b.remote,
		SignalCheck:    !b.remote,
		ImageSize:      true,
		Exec:           true,
		Attach:         true,
		PortForward:    true,
		OwnNetwork:     true,
		HostFiles:      !b.remote,
		UserNamespaces: !b.remote,
		ParallelStarts: parallelPodStarts,
		Limitations:    b.remoteLimitations(),
	}
}

// remoteLimitations says what works differently, or not at all, when the
// podman service runs on another host: runlet logs it as a warning at
// start-up, so nothing degrades silently.
func (b *Backend) remoteLimitations() []string {
	if !b.remote {
		return nil
	}
	limits := []string{
		"container exits are seen through podman's events (some 150 ms later), not its exit files",
		"port-forward dials the pod IP from runlet's host: the IP must be routable from here, and servers bound to the pod's loopback are unreachable",
		"container logs come through the API (podman 4.x cuts their timestamps to seconds)",
		"/stats/summary and the node's ephemeral-storage capacity describe runlet's host, not the podman host; cpu and memory capacity are the podman host's",
		"the podman host's rlimits cannot be read: containers get podman's defaults",
		"probes and anything else that dials a pod IP need the podman host's pod network routable from runlet's host",
	}
	for i, l := range limits {
		limits[i] = "remote podman: " + l
	}
	return limits
}
