package podman

// Remote reports whether the podman service runs on another host.
func (b *Backend) Remote() bool { return b.remote }

// RemoteLimitations says what works differently, or not at all, when the
// podman service runs on another host: runlet logs it as a warning at
// start-up, so nothing degrades silently.
func (b *Backend) RemoteLimitations() []string {
	if !b.remote {
		return nil
	}
	return []string{
		"container exits are seen through podman's events (some 150 ms later), not its exit files",
		"port-forward dials the pod IP from runlet's host: the IP must be routable from here, and servers bound to the pod's loopback are unreachable",
		"container logs come through the API (podman 4.x cuts their timestamps to seconds)",
		"/stats/summary and the node's ephemeral-storage capacity describe runlet's host, not the podman host; cpu and memory capacity are the podman host's",
		"the podman host's rlimits cannot be read: containers get podman's defaults",
		"probes and anything else that dials a pod IP need the podman host's pod network routable from runlet's host",
	}
}
