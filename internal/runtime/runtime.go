// Package runtime is the backend contract: the small surface the kubelet core
// needs from a container backend. It speaks of sandboxes and containers, never
// of Kubernetes objects, so that any backend can sit behind it unchanged:
// podman is the only one today (internal/runtime/podman); runc is planned.
package runtime

import (
	"context"
	"errors"
	"io"
	"time"
)

// Labels runlet stamps on every backend object; they are how a restarted
// runlet finds and re-adopts what it created.
const (
	LabelManaged = "io.runlet.managed"
	// LabelOwner names the runlet (its node) that manages the object: several
	// runlets may share one podman, and each must see only its own pods.
	LabelOwner         = "io.runlet.owner"
	LabelPodUID        = "io.runlet.pod.uid"
	LabelPodNamespace  = "io.runlet.pod.namespace"
	LabelPodName       = "io.runlet.pod.name"
	LabelContainerName = "io.runlet.container.name"
	LabelAttempt       = "io.runlet.container.attempt"
	// LabelSpecHash is the hash of the container spec it was created from, so a
	// changed spec (e.g. a new image) is noticed after a restart of runlet.
	LabelSpecHash = "io.runlet.container.hash"
	// LabelInit marks an init container.
	LabelInit = "io.runlet.container.init"
)

// Errors a backend returns so the core can tell failure kinds apart.
var (
	ErrNotFound      = errors.New("not found")
	ErrImageNotFound = errors.New("image not found")
	// ErrSandboxStart: a container's start that started its sandbox first
	// (a backend may start a sandbox with its first container) failed
	// because the sandbox did not start. The core handles it as a failed
	// sandbox creation.
	ErrSandboxStart = errors.New("pod sandbox did not start")
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
	StdinOnce  bool
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
	CreatedAt                  time.Time
	StartedAt                  time.Time
	FinishedAt                 time.Time
	Labels                     map[string]string
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
	// its API can show it. The core applies it at once; the re-list follows.
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
	Rootless       bool
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
	BlockReadBytes   uint64
	BlockWriteBytes  uint64
	RootfsUsedBytes  uint64
	ProcessCount     uint64
	NetRxErrors      uint64
	NetTxErrors      uint64
}

// Runtime is the backend contract.
type Runtime interface {
	Ping(ctx context.Context) error
	Info(ctx context.Context) (HostInfo, error)

	// EnsureImage makes the image available under the policy and returns its ID.
	// A missing image returns an error wrapping ErrImageNotFound. A pull tries
	// creds in order until one works (none: an anonymous pull), as the
	// kubelet tries each matching credential; PullNever only looks.
	EnsureImage(ctx context.Context, image string, policy PullPolicy, creds []Credential) (string, error)
	// ImageUser is the user a present image runs as ("", "1000", "1000:50",
	// "nobody"): runAsNonRoot is checked against it before a container is created.
	ImageUser(ctx context.Context, image string) (string, error)

	CreateSandbox(ctx context.Context, cfg SandboxConfig) (Sandbox, error)
	// UpdateSandboxResources changes the pod cgroup's CPU and memory
	// settings, for an in-place resize; a limit left zero is lifted.
	UpdateSandboxResources(ctx context.Context, id string, r Resources) error
	// RemoveSandbox kills whatever still runs in the sandbox and removes it and its containers.
	RemoveSandbox(ctx context.Context, id string) error
	ListSandboxes(ctx context.Context) ([]Sandbox, error)

	CreateContainer(ctx context.Context, sandboxID string, cfg ContainerConfig) (string, error)
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends SIGTERM, then SIGKILL after grace.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	RemoveContainer(ctx context.Context, id string) error
	// UpdateContainerResources applies new CPU and memory settings to a
	// running container without restarting it (an in-place resize); a limit
	// left zero is lifted.
	UpdateContainerResources(ctx context.Context, id string, r Resources) error
	// ListContainers returns every runlet-managed container except sandbox infrastructure.
	ListContainers(ctx context.Context) ([]Container, error)
	InspectContainer(ctx context.Context, id string) (Container, error)

	// Events streams change hints until ctx ends or the stream breaks.
	Events(ctx context.Context) (<-chan Event, error)

	Logs(ctx context.Context, id string, opts LogOptions, stdout, stderr io.Writer) error
	Exec(ctx context.Context, id string, cmd []string, sio StreamIO) (int, error)
	Attach(ctx context.Context, id string, sio StreamIO) error
	Stats(ctx context.Context, ids []string) ([]ContainerStats, error)
	// PortForward connects stream to port inside the sandbox's network namespace.
	PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error
}

// SnapshotLister is an optional part of the contract: a backend that can list
// sandboxes and containers in one consistent call implements it, and the
// PLEG then relists with it (half the load on podman at every relist).
type SnapshotLister interface {
	ListAll(ctx context.Context) ([]Sandbox, []Container, error)
}

// ImageSizer is an optional part of the contract: a backend that can tell
// the size of an image it holds implements it, for the kubelet's Pulled
// event ("Image size: N bytes").
type ImageSizer interface {
	ImageSize(ctx context.Context, image string) (uint64, error)
}

// PodLister is an optional part of the contract: a backend that can list one
// pod's objects far more cheaply than everything implements it, and the PLEG
// then refreshes a single pod when an event or a sync names it, instead of
// waiting for the next full relist.
type PodLister interface {
	ListPod(ctx context.Context, podUID string) ([]Sandbox, []Container, error)
}

// SignalChecker is an optional part of the contract: a backend that can look
// at a running container's init process implements it. The kernel drops a
// signal sent to the init process of a PID namespace unless that process
// handles it, so a stop signal can be known to be lost before it is sent;
// the core then does not wait out the minimum shutdown window for a
// handler that does not exist.
type SignalChecker interface {
	// StopSignalLost reports true only when it is sure: the container runs,
	// its main process is its PID namespace's init, and that process has
	// no handler for the container's stop signal. Any doubt is false.
	StopSignalLost(ctx context.Context, id string) bool
}
