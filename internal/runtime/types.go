package runtime

import (
	"context"
	"io"
	"time"
)

// PullPolicy mirrors v1.PullPolicy without importing the Kubernetes API.
type PullPolicy string

const (
	PullAlways       PullPolicy = "Always"
	PullIfNotPresent PullPolicy = "IfNotPresent"
	PullNever        PullPolicy = "Never"
)

// Credential is one registry login usable for a pull.
type Credential struct {
	Server, Username, Password string
}

// PortMapping publishes a container port on the host.
type PortMapping struct {
	HostIP        string
	HostPort      int32
	ContainerPort int32
	Protocol      string // tcp, udp, sctp
}

// SandboxConfig describes the pod-level namespaces to create. A container's
// /etc/hosts and /etc/resolv.conf are not the sandbox's business: the core
// writes them, as the kubelet does, and hands them to each container as
// mounts, which the backend must let win over files of its own.
type SandboxConfig struct {
	PodUID, Namespace, Name string
	// Hostname is the pod's UTS name; with HostNetwork the sandbox shares the
	// host's UTS namespace and Hostname is empty.
	Hostname string
	Labels   map[string]string
	// NetNS is the pod's network namespace, made and wired by the core's pod
	// network (CNI), which the sandbox joins by path; IPs are the addresses
	// that network gave the pod. The backend reports both back for as long
	// as the sandbox exists, across restarts of runlet. Empty: the backend's
	// own network, which then publishes Ports.
	NetNS       string
	IPs         []string
	Ports       []PortMapping
	HostNetwork bool
	// HostPID and HostIPC put the pod in the host's PID and IPC namespaces;
	// ShareProcessNamespace gives its containers one PID namespace.
	HostPID, HostIPC      bool
	ShareProcessNamespace bool
	// Sysctls are set in the pod's namespaces (net, ipc) for all its containers.
	Sysctls map[string]string
	// Resources are the pod-level cgroup's limits (the kubelet's pod cgroup).
	Resources Resources
	// UserNS, when set, gives the pod a user namespace of its own
	// (hostUsers: false), which owns all of the pod's namespaces, and
	// idmapped root filesystems and bind mounts, so that what root owns on
	// the host root owns in the pod. Only a backend with
	// Capabilities.UserNamespaces gets it.
	UserNS *UserNamespace `json:",omitempty"`
	// AttachNetwork, with UserNS and a pod network, wires the network
	// namespace the backend made inside the pod's user namespace (a
	// namespace can only be joined from the user namespace that owns it,
	// so the core cannot make it first): the backend calls it with that
	// namespace's path before CreateSandbox returns, and reports the
	// addresses it returns as IPs. NetNS is where the core pins that
	// namespace, set before it exists, for a backend that must record it at
	// creation. A failure fails the sandbox. A backend with
	// Capabilities.NetworkBeside gets it for every pod on the pod network
	// and, without UserNS, calls it with "".
	AttachNetwork func(ctx context.Context, netns string) (ips []string, err error) `json:"-"`
}

// UserNamespace is a pod's user namespace: its ID mappings, one each for
// users and groups as the kubelet makes them (container 0 to a host range
// of 65536 of its own).
type UserNamespace struct {
	UIDs []IDMapping `json:"uidMappings"`
	GIDs []IDMapping `json:"gidMappings"`
}

// IDMapping maps Length IDs from ContainerID in the pod to HostID on the
// host.
type IDMapping struct {
	ContainerID uint32 `json:"containerId"`
	HostID      uint32 `json:"hostId"`
	Length      uint32 `json:"length"`
}

// HostRoot is the host ID the pod's root runs as.
func (u *UserNamespace) HostRoot() (uid, gid uint32) {
	return hostOf(u.UIDs, 0), hostOf(u.GIDs, 0)
}

func hostOf(m []IDMapping, id uint32) uint32 {
	for _, e := range m {
		if id >= e.ContainerID && id-e.ContainerID < e.Length {
			return e.HostID + id - e.ContainerID
		}
	}
	return 0
}

// SandboxState is the coarse state of a sandbox.
type SandboxState string

const (
	SandboxReady    SandboxState = "Ready"
	SandboxNotReady SandboxState = "NotReady"
)

// Sandbox is a pod's namespaces as the backend reports them.
type Sandbox struct {
	ID                      string
	PodUID, Namespace, Name string
	State                   SandboxState
	IPs                     []string
	// NetNS is SandboxConfig.NetNS: the core tears the pod network down
	// when the sandbox goes.
	NetNS     string
	CreatedAt time.Time
	Labels    map[string]string
}

// Mount is a bind mount into a container, or an image mounted into it.
type Mount struct {
	HostPath, ContainerPath string
	// Image, instead of HostPath, is an OCI image present on the backend
	// whose root filesystem (SubPath of it, if set) is mounted read-only:
	// an image volume.
	Image, SubPath string
	ReadOnly       bool
	// Propagation is the mount's propagation (v1.MountPropagationMode's
	// meaning): "" or "None" private, "HostToContainer" rslave,
	// "Bidirectional" rshared.
	Propagation string
	// Relabel gives HostPath the container's SELinux mount label before
	// the container starts: the kubelet's SELinuxRelabel, set by the core
	// only where the host enforces SELinux, for the volumes it manages and
	// the files it writes for the pod (a hostPath keeps its label).
	Relabel bool
}

// Resources are cgroup limits; zero means unset (unlimited, or the
// backend's default).
type Resources struct {
	// CPUMillis is the CPU limit in millicores: a CFS quota of CPUMillis/1000
	// CPUs per 100 ms period (at least 1 ms, as the kubelet's MilliCPUToQuota).
	CPUMillis   int64
	MemoryBytes int64
	CPUShares   uint64
	// PidsLimit caps the number of processes (pids.max).
	PidsLimit int64
	// OOMScoreAdj is the processes' oom_score_adj; nil leaves the backend's.
	OOMScoreAdj *int
}

// ContainerConfig is everything a backend needs to create one container.
type ContainerConfig struct {
	Name       string
	Attempt    int
	Image      string
	Command    []string // overrides the image entrypoint when set
	Args       []string // overrides the image cmd when set
	Env        []string // KEY=value, in order
	WorkingDir string
	Stdin      bool
	TTY        bool
	Mounts     []Mount
	Resources  Resources
	// Security is who the container runs as and what it may do.
	Security SecurityConfig
	Labels   map[string]string
	// StopTimeout is how long the backend waits between SIGTERM and SIGKILL
	// when it stops the container on its own.
	StopTimeout time.Duration
}

// SecurityConfig is a container's identity and privileges, what the
// kubelet hands CRI as LinuxContainerSecurityContext.
type SecurityConfig struct {
	// RunAsUser and RunAsGroup are numeric IDs; nil leaves the image's user
	// (Username when it names one) and that user's group.
	RunAsUser, RunAsGroup *int64
	// Username is the image's non-numeric user, used when RunAsUser is nil.
	Username string
	// SupplementalGroups are added to the user's groups.
	SupplementalGroups []int64
	Privileged         bool
	// CapAdd and CapDrop name capabilities as "CAP_NET_ADMIN" (or "ALL").
	CapAdd, CapDrop []string
	// NoNewPrivs sets no_new_privs: setuid binaries and file capabilities
	// grant nothing.
	NoNewPrivs     bool
	ReadOnlyRootfs bool
	Seccomp        SeccompProfile
	// MaskedPaths and ReadonlyPaths: nil keeps the backend's defaults, an
	// empty non-nil list masks (or write-protects) nothing.
	MaskedPaths, ReadonlyPaths []string
	// HostPID and HostIPC put the container in the host's namespaces.
	HostPID, HostIPC bool
	// SELinuxOptions ("type:spc_t", "level:s0:c1") and AppArmorProfile
	// ("unconfined", a profile name; empty: the backend's default) apply only
	// where the host enforces them.
	SELinuxOptions  []string
	AppArmorProfile string
}

// SeccompProfile is a container's seccomp filter.
type SeccompProfile struct {
	Type SeccompType
	// Path is the profile's file, for SeccompLocalhost.
	Path string
}

// SeccompType says which seccomp filter applies.
type SeccompType string

const (
	// SeccompRuntimeDefault is the backend's default filter (also the zero value).
	SeccompRuntimeDefault SeccompType = ""
	SeccompUnconfined     SeccompType = "Unconfined"
	SeccompLocalhost      SeccompType = "Localhost"
)

// ContainerState is the coarse state of a container.
type ContainerState string

const (
	ContainerCreated ContainerState = "Created"
	ContainerRunning ContainerState = "Running"
	ContainerExited  ContainerState = "Exited"
	ContainerUnknown ContainerState = "Unknown"
)

// ReasonStartError is the end of a container whose process could not be
// started, as containerd's CRI reports it (with exit code 128).
const ReasonStartError = "StartError"

// Container is one container as the backend reports it.
type Container struct {
	ID                         string
	SandboxID                  string
	PodUID, Namespace, PodName string
	Name                       string
	Attempt                    int
	Image                      string
	ImageID                    string
	State                      ContainerState
	ExitCode                   int
	OOMKilled                  bool
	Error                      string
	// Reason names an end the backend knows more of than its exit code:
	// ReasonStartError for a process that never ran. Empty: the core
	// derives the reason from the exit.
	Reason     string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	Labels     map[string]string
}

// Event is a hint that something changed for a pod: the core re-lists the
// pod instead of trusting it. PodUID may be empty when the backend only knows
// the container (the core then looks the pod up).
type Event struct {
	PodUID      string
	ContainerID string
	Action      string
	Time        time.Time
	// Exit is set when the backend read the container's end from the same
	// record its own state comes from (podman: conmon's exit file), before
	// its API can show it (Capabilities.ExitHints). The core applies it at
	// once; the re-list follows.
	Exit *ContainerExit
}

// ActionDied is the Action of an event that tells of a container's end.
const ActionDied = "died"

// ContainerExit is how a container ended.
type ContainerExit struct {
	ExitCode   int
	FinishedAt time.Time
	OOMKilled  bool
}

// HostInfo describes the backend and the host it runs on.
type HostInfo struct {
	RuntimeName    string // e.g. "podman"
	RuntimeVersion string
	OCIRuntime     string
	CgroupVersion  string
	KernelVersion  string
	OS             string
	Arch           string
	// StorageRoot is where the backend keeps images and containers'
	// writable layers (podman's graph root): the image filesystem.
	StorageRoot string
	// Remote: the backend runs on another host, so this host's /proc, exit
	// files and log files say nothing about its containers. CPUs and
	// MemoryBytes are then the backend host's (0: unknown).
	Remote      bool
	CPUs        int
	MemoryBytes int64
}

// LogOptions select a slice of a container's log.
type LogOptions struct {
	Follow     bool
	Timestamps bool
	TailLines  int64 // <0 means all
	Since      time.Time
	LimitBytes int64
}

// StreamIO connects the caller to a container's standard streams.
type StreamIO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	Resize         <-chan TermSize
	// Started, if set, is called once an exec'd command is running: its
	// timeout counts from there, as the CRI's ExecSync counts it, and not
	// the runtime's own set-up of the exec session.
	Started func()
}

// TermSize is a terminal size change.
type TermSize struct {
	Width, Height uint16
}

// ContainerStats are resource usage figures for one container.
type ContainerStats struct {
	ID               string
	Time             time.Time
	CPUNanos         uint64 // cumulative CPU time
	MemoryUsageBytes uint64
	MemoryWorkingSet uint64
	MemoryLimitBytes uint64
	NetRxBytes       uint64
	NetTxBytes       uint64
	ProcessCount     uint64
}

// ForwardResize applies each terminal size from sizes until done closes or
// sizes does. A resize that fails (before the process has its terminal)
// is dropped: the next one counts.
func ForwardResize(done <-chan struct{}, sizes <-chan TermSize, resize func(TermSize) error) {
	for {
		select {
		case <-done:
			return
		case s, ok := <-sizes:
			if !ok {
				return
			}
			_ = resize(s)
		}
	}
}
