package runtime

import (
	"context"
	"errors"
	"io"
	"time"
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

// Runtime is the whole contract: every backend implements every role, and
// says through Capabilities which optional answers it gives.
type Runtime interface {
	Status
	Lifecycle
	Observer
	Streamer
	Files
	StatsReader
}

// Status is whether the backend answers and what it is.
type Status interface {
	Ping(ctx context.Context) error
	Info(ctx context.Context) (HostInfo, error)
	// Capabilities are fixed for the backend's life; the core reads them once.
	Capabilities() Capabilities
}

// Images makes images present and tells about them.
type Images interface {
	// EnsureImage makes the image available under the policy and returns
	// its ID. A missing image returns an error wrapping ErrImageNotFound. A
	// pull tries creds in order until one works (none: an anonymous pull),
	// as the kubelet tries each matching credential; PullNever only looks.
	EnsureImage(ctx context.Context, image string, policy PullPolicy, creds []Credential) (string, error)
	// ImageUser is the user a present image runs as ("", "1000", "1000:50",
	// "nobody"): runAsNonRoot is checked against it before a container is created.
	ImageUser(ctx context.Context, image string) (string, error)
	// ImageSize is a present image's size, for the kubelet's Pulled event;
	// 0 without Capabilities.ImageSize.
	ImageSize(ctx context.Context, image string) (uint64, error)
	// LoadImage loads the images of a docker-archive or OCI-layout tarball
	// and returns their names: how an air-gapped host, and the tests, get
	// images without a registry.
	LoadImage(ctx context.Context, archive io.Reader) ([]string, error)
}

// Lifecycle creates, starts, stops and removes sandboxes and containers.
type Lifecycle interface {
	Images

	CreateSandbox(ctx context.Context, cfg SandboxConfig) (Sandbox, error)
	// UpdateSandboxResources changes the pod cgroup's CPU and memory
	// settings, for an in-place resize; a limit left zero is lifted.
	UpdateSandboxResources(ctx context.Context, id string, r Resources) error
	// RemoveSandbox kills whatever still runs in the sandbox and removes it and its containers.
	RemoveSandbox(ctx context.Context, id string) error
	// ReleasePod removes what the backend keeps for a pod beside its
	// sandboxes (its pod cgroup, and what still runs there) once the pod is
	// gone with all of them: what a crash between a sandbox's removal and
	// its cgroup's, or a sandbox create that failed part-way, left behind.
	// A pod it holds nothing of is no error.
	ReleasePod(ctx context.Context, podUID string) error

	CreateContainer(ctx context.Context, sandboxID string, cfg ContainerConfig) (string, error)
	// StartContainer starts a created container. A backend may start the
	// sandbox with its first container; when that fails the error wraps
	// ErrSandboxStart.
	StartContainer(ctx context.Context, id string) error
	// StopContainer sends SIGTERM, then SIGKILL after grace.
	StopContainer(ctx context.Context, id string, grace time.Duration) error
	RemoveContainer(ctx context.Context, id string) error
	// UpdateContainerResources applies new CPU and memory settings to a
	// running container without restarting it (an in-place resize); a limit
	// left zero is lifted.
	UpdateContainerResources(ctx context.Context, id string, r Resources) error
	// StopSignalLost reports true only when it is sure: the container runs,
	// its main process is its PID namespace's init, and that process has no
	// handler for the container's stop signal, so the kernel drops the
	// signal. The core then does not wait out the minimum shutdown window
	// for a handler that does not exist. Any doubt, and a backend without
	// Capabilities.SignalCheck, is false.
	StopSignalLost(ctx context.Context, id string) bool
}

// ListFilter selects what List returns.
type ListFilter struct {
	// PodUID selects one pod's sandboxes and containers; empty selects all.
	PodUID string
}

// Observer shows what exists: the PLEG's source of truth.
type Observer interface {
	// List returns the sandboxes and containers the filter selects, from one
	// consistent view where the backend can give one.
	List(ctx context.Context, f ListFilter) ([]Sandbox, []Container, error)
	InspectContainer(ctx context.Context, id string) (Container, error)
	// Events streams change hints until ctx ends or the stream breaks.
	Events(ctx context.Context) (<-chan Event, error)
}

// Streamer connects the kubelet API to containers.
type Streamer interface {
	Logs(ctx context.Context, id string, opts LogOptions, stdout, stderr io.Writer) error
	// Exec runs cmd in the container; without Capabilities.Exec it fails.
	Exec(ctx context.Context, id string, cmd []string, sio StreamIO) (int, error)
	// Attach connects to the container's main process; without
	// Capabilities.Attach it fails.
	Attach(ctx context.Context, id string, sio StreamIO) error
	// PortForward connects stream to port inside the sandbox's network
	// namespace; without Capabilities.PortForward it fails.
	PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error
}

// Files locates a container's files on this host.
type Files interface {
	// ContainerFiles are the container's log file and root filesystem;
	// empty fields where runlet cannot reach them (without
	// Capabilities.HostFiles, always).
	ContainerFiles(ctx context.Context, id string) (ContainerFiles, error)
	// ReopenContainerLog makes the backend write the container's log to a
	// new file at its path, after the core rotated the old one away.
	ReopenContainerLog(ctx context.Context, id string) error
}

// ContainerFiles are where one container keeps its files on this host.
type ContainerFiles struct {
	// LogPath is the container's log, in the CRI format.
	LogPath string
	// RootfsDir is its writable layer's directory.
	RootfsDir string
}

// StatsReader reads containers' resource usage.
type StatsReader interface {
	Stats(ctx context.Context, ids []string) ([]ContainerStats, error)
}
