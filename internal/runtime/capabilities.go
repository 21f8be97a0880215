package runtime

// Capabilities say what a backend can do beyond what every backend does,
// and the numbers the core tunes itself by, so that shared code holds none
// of one backend's.
type Capabilities struct {
	// Processes: a container's command runs as a process, so its exit
	// code, stop signal, output and resource use are real. Every backend has
	// it but the unit tests' fake, which only models states; runtimetest
	// reads it, the core does not.
	Processes bool
	// PodList: a List of one pod costs in proportion to that pod, not to
	// the host, so the PLEG refreshes a pod that an event or a sync names
	// at once instead of at the next full relist.
	PodList bool
	// ExitHints: Events carry a container's Exit, read from the record the
	// backend's own state comes from, before its API shows it.
	ExitHints bool
	// SignalCheck: StopSignalLost can be true.
	SignalCheck bool
	// ImageSize: ImageSize answers.
	ImageSize bool
	// Exec, Attach and PortForward: the streaming calls that work.
	Exec, Attach, PortForward bool
	// OwnNetwork: a sandbox the core gives no network namespace (NetNS)
	// gets the backend's own network, an address and its Ports published.
	// Without it such a sandbox has a network namespace of its own with
	// only loopback: the core's pod network is the backend's network.
	OwnNetwork bool
	// NetworkBeside: the backend can make a sandbox while the core's pod
	// network is set up. The core then starts the set-up first, which pins
	// a new namespace at SandboxConfig.NetNS, and gives CreateSandbox
	// AttachNetwork for every pod on the pod network, not only one with
	// UserNS: the backend calls it with "" once the sandbox needs the
	// namespace wired, before it returns, and reports the addresses.
	NetworkBeside bool
	// UserNamespaces: SandboxConfig.UserNS is honoured (hostUsers: false).
	// Without it the core refuses such a pod, as the kubelet refuses it on
	// a runtime without user namespaces.
	UserNamespaces bool
	// HostFiles: containers' log files and root filesystems are on this
	// host, where ContainerFiles points.
	HostFiles bool
	// ParallelStarts is how many pods the core starts at once: a backend
	// that serialises starts on its own locks finishes a burst sooner when
	// fed a few at a time. 0: no bound.
	ParallelStarts int
	// Limitations tell the operator what works differently, or not at all,
	// with this backend (a remote podman, say); logged at start.
	Limitations []string
}
