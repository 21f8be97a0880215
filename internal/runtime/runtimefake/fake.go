// Package runtimefake is an in-memory runtime.Runtime for unit tests of the
// kubelet core. It keeps sandboxes and containers with their states, exit
// codes, timestamps and labels, and lets a test make containers exit, images
// go missing and calls fail. It is used only by tests and by the hollow
// node of `make scale` (test/scale/hollow), which runs no container.
package runtimefake

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// ErrUnsupported is returned by the streaming calls the fake does not model.
var ErrUnsupported = errors.New("runtimefake: not supported")

// StopCall records one StopContainer call.
type StopCall struct {
	ID    string
	Grace time.Duration
}

type container struct {
	c   runtime.Container
	cfg runtime.ContainerConfig
}

// Fake is a thread-safe in-memory backend. The zero value is not usable;
// use New. Several Fakes may share one store (see Reopen), as several
// backend instances share one podman.
type Fake struct {
	*store
	// owner, when set, hides the objects of other owners, as a backend's
	// owner filter does.
	owner string
}

// store is the backend's state: what survives a new instance.
type store struct {
	mu         sync.Mutex
	seq        int
	last       time.Time
	sandboxes  map[string]*runtime.Sandbox
	containers map[string]*container
	missing    map[string]bool
	// images, once set, are the only images present (see SetImages).
	images     map[string]bool
	fail       map[string]error
	calls      map[string]int
	stops      []StopCall
	logs       map[string]string
	subs       []subscriber
	exec       ExecFunc
	imageUsers map[string]string
	sbConfigs  map[string]runtime.SandboxConfig
	signalLost map[string]bool // container IDs whose stop signal is lost
	released   []string        // pod UIDs ReleasePod was called for
}

var _ runtime.Runtime = (*Fake)(nil)

// subscriber is one open event stream and the owner whose objects it tells of.
type subscriber struct {
	ch    chan runtime.Event
	owner string
}

// New returns an empty fake that sees every object.
func New() *Fake {
	return &Fake{store: &store{
		sandboxes:  map[string]*runtime.Sandbox{},
		containers: map[string]*container{},
		missing:    map[string]bool{},
		fail:       map[string]error{},
		calls:      map[string]int{},
		logs:       map[string]string{},
		imageUsers: map[string]string{},
		sbConfigs:  map[string]runtime.SandboxConfig{},
		signalLost: map[string]bool{},
	}}
}

// Reopen returns a new backend instance over the same state, for owner
// ("": every owner), as a restarted runlet's backend over the same podman.
func (f *Fake) Reopen(owner string) *Fake {
	return &Fake{store: f.store, owner: owner}
}

// owns reports whether an object with these labels is this instance's.
func (f *Fake) owns(labels map[string]string) bool {
	return f.owner == "" || labels[runtime.LabelOwner] == f.owner
}

// Capabilities implements runtime.Status. The fake runs no processes: what
// depends on them (exit codes of real commands, stop timing, logs, stats)
// is the test's to play through Exit, SetLogs and HandleExec.
func (f *Fake) Capabilities() runtime.Capabilities {
	return runtime.Capabilities{PodList: true, SignalCheck: true, Exec: true, OwnNetwork: true}
}

// SetStopSignalLost makes StopSignalLost report true for a container, as
// for an init process without a handler for its stop signal.
func (f *Fake) SetStopSignalLost(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signalLost[id] = true
}

// StopSignalLost implements runtime.Lifecycle for running containers
// marked with SetStopSignalLost.
func (f *Fake) StopSignalLost(_ context.Context, id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	return ok && f.signalLost[id] && c.c.State == runtime.ContainerRunning
}

// SetImageUser sets the user ImageUser reports for an image ("" by default).
func (f *Fake) SetImageUser(image, user string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.imageUsers[image] = user
}

// SandboxConfig returns the config a sandbox was created with.
func (f *Fake) SandboxConfig(id string) (runtime.SandboxConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg, ok := f.sbConfigs[id]
	return cfg, ok
}

// ImageUser implements runtime.Runtime.
func (f *Fake) ImageUser(_ context.Context, image string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("ImageUser"); err != nil {
		return "", err
	}
	if f.absent(image) {
		return "", fmt.Errorf("image %s: %w", image, runtime.ErrImageNotFound)
	}
	return f.imageUsers[image], nil
}

// --- controls ---

// Fail makes every later call of method (e.g. "StartContainer") return err;
// a nil err clears it.
func (f *Fake) Fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		delete(f.fail, method)
		return
	}
	f.fail[method] = err
}

// SetImageMissing makes EnsureImage and CreateContainer fail with
// ErrImageNotFound for the images (missing=false restores them).
func (f *Fake) SetImageMissing(missing bool, images ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, img := range images {
		if missing {
			f.missing[img] = true
		} else {
			delete(f.missing, img)
		}
	}
}

// SetImages makes the images the only ones present: others are missing, as
// on a backend with an image store. By default every image not marked
// missing is present.
func (f *Fake) SetImages(images ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images = map[string]bool{}
	for _, img := range images {
		f.images[img] = true
	}
}

// absent reports an image the store does not hold. f.mu must be held.
func (f *Fake) absent(image string) bool {
	return f.missing[image] || f.images != nil && !f.images[image]
}

// Exit makes a running container exit with code.
func (f *Fake) Exit(id string, code int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return fmt.Errorf("container %s: %w", id, runtime.ErrNotFound)
	}
	if c.c.State != runtime.ContainerRunning {
		return fmt.Errorf("container %s is %s, not running", id, c.c.State)
	}
	f.exitLocked(c, code)
	return nil
}

// SetSandboxState changes a sandbox's state (e.g. to NotReady).
func (f *Fake) SetSandboxState(id string, st runtime.SandboxState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.sandboxes[id]; ok {
		sb.State = st
	}
}

// SetLogs sets what Logs writes for a container.
func (f *Fake) SetLogs(id, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[id] = text
}

// Calls returns how many times method was called (failed calls included).
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Stops returns every StopContainer call, in order.
func (f *Fake) Stops() []StopCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]StopCall(nil), f.stops...)
}

// Config returns the config a container was created with.
func (f *Fake) Config(id string) (runtime.ContainerConfig, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.containers[id]
	if !ok {
		return runtime.ContainerConfig{}, false
	}
	return c.cfg, true
}

// Containers returns every container, oldest first.
func (f *Fake) Containers() []runtime.Container {
	_, cs, _ := f.List(context.Background(), runtime.ListFilter{})
	return cs
}

// Sandboxes returns every sandbox, oldest first.
func (f *Fake) Sandboxes() []runtime.Sandbox {
	sbs, _, _ := f.List(context.Background(), runtime.ListFilter{})
	return sbs
}

// --- internals ---

// enter counts the call and returns the injected failure, if any. f.mu must be held.
func (f *Fake) enter(method string) error {
	f.calls[method]++
	return f.fail[method]
}

// now is the wall clock, made strictly increasing so creation order is total.
func (f *Fake) now() time.Time {
	t := time.Now()
	if !t.After(f.last) {
		t = f.last.Add(time.Nanosecond)
	}
	f.last = t
	return t
}

func (f *Fake) nextID(prefix string) string {
	f.seq++
	return fmt.Sprintf("%s%04d", prefix, f.seq)
}

func (f *Fake) exitLocked(c *container, code int) {
	c.c.State = runtime.ContainerExited
	c.c.ExitCode = code
	c.c.FinishedAt = f.now()
	f.publish(c.c.Labels, c.c.PodUID, c.c.ID, runtime.ActionDied)
}

func (f *Fake) publish(labels map[string]string, uid, id, action string) {
	ev := runtime.Event{PodUID: uid, ContainerID: id, Action: action, Time: time.Now()}
	for _, s := range f.subs {
		if s.owner != "" && labels[runtime.LabelOwner] != s.owner {
			continue
		}
		select {
		case s.ch <- ev:
		default: // a hint only: dropping is allowed by the contract
		}
	}
}

func copyLabels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func imageID(image string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(image))
	return fmt.Sprintf("sha256:%016x", h.Sum64())
}

// --- runtime.Runtime ---

// Ping implements runtime.Runtime.
func (f *Fake) Ping(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.enter("Ping")
}

// Info implements runtime.Runtime.
func (f *Fake) Info(context.Context) (runtime.HostInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return runtime.HostInfo{RuntimeName: "fake", RuntimeVersion: "0", OCIRuntime: "none",
		CgroupVersion: "2", OS: "linux", Arch: "amd64"}, f.enter("Info")
}
