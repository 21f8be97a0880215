package runc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/hostproc"
	"github.com/runlet/runlet/internal/runtime/runc/imagestore"
	"github.com/runlet/runlet/internal/runtime/runc/ocispec"
	"github.com/runlet/runlet/internal/runtime/runc/pause"
	"golang.org/x/sys/unix"
)

// Options configure Open.
type Options struct {
	// Root holds everything the backend keeps (see the package doc).
	Root string
	// Runc and Conmon are the binaries; empty: looked up in PATH (and
	// conmon in podman's libexec directories).
	Runc, Conmon string
	// Pause is the pause processes' program; empty: runlet-pause beside
	// runlet or in PATH, else runlet's own binary (package pause).
	Pause string
	// Owner, when set, filters everything: the backend lists and watches
	// only objects labelled io.runlet.owner=Owner.
	Owner string
	// Images is an image store to use instead of opening Root/images: for
	// several instances over one root in one process (the backend suite).
	Images *imagestore.Store
	// ImageOptions tune the store the backend opens.
	ImageOptions imagestore.Options
	// ImageGCHigh and ImageGCLow are the image GC's thresholds in percent
	// of the image filesystem; GC runs every 5 minutes when ImageGCHigh is
	// set, as the kubelet's does.
	ImageGCHigh, ImageGCLow int
	// RunDir holds the mount points of containers in a user namespace of
	// their pod's, which the pod's root, an unprivileged user on the host,
	// must reach by path: a directory every user can search, as
	// containerd's state directory is. Default DefaultRunDir.
	RunDir string
	// Logf receives start-up decisions; nil discards.
	Logf func(format string, args ...any)
}

// DefaultRunDir is Options.RunDir's default.
const DefaultRunDir = "/run/runlet/runc"

// Backend implements runtime.Runtime on runc.
type Backend struct {
	opts Options
	// runc is the path that runs runc: the sealed copy runcCopy holds,
	// where the host allows one (sealedRunc).
	runc       string
	runcCopy   *os.File
	version    []byte // runc's --version, read once
	conmon     string
	pause      *pause.Binary
	images     *imagestore.Store
	ownsImages bool
	host       ocispec.Host
	info       runtime.HostInfo
	ooms       *hostproc.OOMRecorder
	events     *broadcaster
	sel        labeler
	index      *podIndex
	// exits holds each container's exit once read (ID → runtime.ContainerExit).
	exits     sync.Map
	watchOnce sync.Once
	watchErr  error
	// ctx ends with Close: the exit watch's life.
	ctx    context.Context
	cancel context.CancelFunc

	// mu serialises changes to one object's records against its removal.
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// Open checks the host and opens the backend over opts.Root. A host
// without runc or conmon, or where runlet is not root, gets an error that
// says what is missing.
func Open(ctx context.Context, opts Options) (*Backend, error) {
	if opts.Root == "" {
		return nil, errors.New("runc backend: no root directory")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("runc backend: runlet must run as root to run containers with runc (use --runtime=podman otherwise)")
	}
	if opts.RunDir == "" {
		opts.RunDir = DefaultRunDir
	}
	b := &Backend{opts: opts, locks: map[string]*sync.Mutex{}, events: newBroadcaster(), sel: hostLabeler{}, index: newPodIndex()}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	var err error
	if b.runc, err = findBinary(opts.Runc, "runc", "/usr/sbin/runc", "/usr/bin/runc"); err != nil {
		return nil, fmt.Errorf("runc backend: %w (install runc)", err)
	}
	b.useSealedRunc(ctx)
	if b.conmon, err = findBinary(opts.Conmon, "conmon", "/usr/libexec/podman/conmon", "/usr/bin/conmon"); err != nil {
		return nil, fmt.Errorf("runc backend: %w (install conmon, which comes with podman)", err)
	}
	if b.pause, err = pause.OpenBinary(opts.Pause); err != nil {
		return nil, fmt.Errorf("runc backend: %w", err)
	}
	if b.pause.Own {
		b.logf("runc backend: %s is not beside runlet nor in PATH; pods' pause processes run runlet's own binary, which starts slower", pause.BinaryName)
	}
	for _, d := range []string{b.stateDir(), b.exitDir(), filepath.Join(opts.Root, "s"), filepath.Join(opts.Root, "c")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("runc backend: %w", err)
		}
	}
	b.images = opts.Images
	if b.images == nil {
		if b.images, err = imagestore.Open(filepath.Join(opts.Root, "images"), opts.ImageOptions); err != nil {
			return nil, fmt.Errorf("runc backend: image store: %w", err)
		}
		b.ownsImages = true
	}
	if err := b.detect(ctx); err != nil {
		_ = b.Close()
		return nil, err
	}
	b.recoverRecords()
	if b.ownsImages {
		go b.serveImageLoads()
	}
	if opts.ImageGCHigh > 0 {
		go b.gcLoop(opts.ImageGCHigh, opts.ImageGCLow)
	}
	return b, nil
}

// Close releases the image store the backend opened; containers and pause
// processes go on running.
func (b *Backend) Close() error {
	b.cancel()
	if b.runcCopy != nil {
		b.runcCopy.Close()
	}
	if b.pause != nil {
		b.pause.Close()
	}
	if b.ownsImages && b.images != nil {
		return b.images.Close()
	}
	return nil
}

// serveImageLoads lets `runlet image load` reach the store while the
// backend holds it.
func (b *Backend) serveImageLoads() {
	if err := b.images.Serve(b.ctx); err != nil && b.opts.Logf != nil {
		b.opts.Logf("runc backend: `runlet image load` cannot reach this runlet: %v", err)
	}
}

// Images is the backend's image store (for `runlet image load` and GC).
func (b *Backend) Images() *imagestore.Store { return b.images }

func findBinary(given, name string, fallbacks ...string) (string, error) {
	if given != "" {
		return exec.LookPath(given)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range fallbacks {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (not in PATH nor %s)", name, strings.Join(fallbacks, ", "))
}

// detect reads what the host allows containers, once.
func (b *Backend) detect(ctx context.Context) error {
	if b.version == nil {
		out, err := b.runcCommand(ctx, "--version").Output()
		if err != nil {
			return fmt.Errorf("runc backend: %s --version: %w", b.runcName(), err)
		}
		b.version = out
	}
	version := strings.TrimPrefix(strings.SplitN(string(b.version), "\n", 2)[0], "runc version ")
	h := ocispec.Host{Cgroups: cgroups.Detect(cgroups.Unified())}
	var r unix.Rlimit
	var err error
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &r) == nil {
		h.NoFileHard = r.Max
	}
	if unix.Getrlimit(unix.RLIMIT_NPROC, &r) == nil {
		h.NProcHard = r.Max
	}
	if h.Capabilities, err = ocispec.BoundingSet(); err != nil {
		return fmt.Errorf("runc backend: %w", err)
	}
	for _, c := range h.Capabilities {
		h.CapSysResource = h.CapSysResource || c == "CAP_SYS_RESOURCE"
	}
	if data, err := os.ReadFile("/proc/self/oom_score_adj"); err == nil {
		_, _ = fmt.Sscan(string(data), &h.OOMScoreAdj)
	}
	h.Hostname, _ = os.Hostname()
	if h.Devices, err = ocispec.HostDevices(); err != nil {
		return fmt.Errorf("runc backend: %w", err)
	}
	b.host = h
	b.ooms = hostproc.NewOOMRecorder(cgroups.Root, h.Cgroups.V2)
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	cg := "v1"
	if h.Cgroups.V2 {
		cg = "v2"
	}
	var si unix.Sysinfo_t
	_ = unix.Sysinfo(&si)
	b.info = runtime.HostInfo{
		CPUs: goruntime.NumCPU(), MemoryBytes: int64(si.Totalram) * int64(si.Unit),
		RuntimeName: "runc", RuntimeVersion: version, OCIRuntime: "runc", CgroupVersion: cg,
		KernelVersion: unix.ByteSliceToString(uts.Release[:]), OS: "linux", Arch: goruntime.GOARCH,
		StorageRoot: filepath.Join(b.opts.Root, "images"),
	}
	b.logf("runc backend: runc %s, conmon %s, pause %s, cgroup %s, root %s", version, b.conmon, b.pause.Name(), cg, b.opts.Root)
	return nil
}

func (b *Backend) logf(format string, args ...any) {
	if b.opts.Logf != nil {
		b.opts.Logf(format, args...)
	}
}

// Ping checks that runc still answers and the root is there.
func (b *Backend) Ping(ctx context.Context) error {
	if _, err := os.Stat(b.stateDir()); err != nil {
		return fmt.Errorf("runc backend: %w", err)
	}
	if err := b.runcCommand(ctx, "--version").Run(); err != nil {
		return fmt.Errorf("runc backend: %s: %w", b.runcName(), err)
	}
	return nil
}

// Info describes runc and the host.
func (b *Backend) Info(context.Context) (runtime.HostInfo, error) { return b.info, nil }

// Capabilities: everything, on this host.
func (b *Backend) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{
		Processes: true, PodList: true, ExitHints: true, SignalCheck: true, ImageSize: true,
		Exec: true, Attach: true, PortForward: true, HostFiles: true, UserNamespaces: true, NetworkBeside: true,
	}
}

func (b *Backend) stateDir() string            { return filepath.Join(b.opts.Root, "state") }
func (b *Backend) exitDir() string             { return filepath.Join(b.opts.Root, "exits") }
func (b *Backend) sandboxDir(id string) string { return filepath.Join(b.opts.Root, "s", id) }
func (b *Backend) bundle(id string) string     { return filepath.Join(b.opts.Root, "c", id) }

// lock returns the lock of one object's records.
func (b *Backend) lock(id string) *sync.Mutex {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.locks[id]
	if !ok {
		l = &sync.Mutex{}
		b.locks[id] = l
	}
	return l
}

func (b *Backend) forgetLock(id string) {
	b.mu.Lock()
	delete(b.locks, id)
	b.mu.Unlock()
}

var _ runtime.Runtime = (*Backend)(nil)
