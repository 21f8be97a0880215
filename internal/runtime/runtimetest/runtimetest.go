// Package runtimetest is the suite that defines a correct backend: every
// runlet backend passes it, the unit tests' fake included. It speaks only
// the runtime contract, plays the core's part (it stamps the identity and
// owner labels), and skips what a backend's capabilities say it does not do.
package runtimetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// Image is the test image the suite needs, which it loads into the backend
// (see LoadFixture): a busybox with sh, sleep, cat, httpd and nc.
const Image = "localhost/runlet/runtimetest:latest"

// Namespace is the pod namespace of everything the suite creates.
const Namespace = "runtimetest"

// Opener opens an instance of the backend for owner, over the state every
// instance shares (one podman service, one fake store), as a restarted
// runlet opens its backend again over what the last one left.
type Opener func(t *testing.T, owner string) runtime.Runtime

// suite carries one run's identity so that it touches only its own objects,
// even when other runs share the backend.
type suite struct {
	rt     runtime.Runtime
	open   Opener
	owner  string
	caps   runtime.Capabilities
	prefix string
	pods   map[string]string // pod UID -> sandbox ID
	net    podNetwork
}

// subtest is one part of the suite and the capabilities it needs.
type subtest struct {
	name  string
	run   func(*testing.T)
	needs []need
}

// need is a capability a subtest needs, and what its absence means.
type need struct {
	ok   bool
	what string
}

// Run exercises the contract against instances that open opens. Every
// sandbox it creates is removed when the test ends, whatever happens.
func Run(t *testing.T, open Opener) {
	prefix := "rt" + randHex(4)
	owner := "runtimetest-" + prefix
	rt := open(t, owner)
	LoadFixture(t, rt)
	s := &suite{rt: rt, open: open, owner: owner, caps: rt.Capabilities(), prefix: prefix, pods: map[string]string{}}
	t.Cleanup(func() { s.cleanup(t) })
	for _, st := range s.subtests() {
		t.Run(st.name, func(t *testing.T) {
			for _, n := range st.needs {
				if !n.ok {
					t.Skip("the backend " + n.what)
				}
			}
			st.run(t)
		})
	}
}

func (s *suite) subtests() []subtest {
	c := s.caps
	procs := need{c.Processes, "runs no processes"}
	exec := need{c.Exec, "does not exec"}
	return []subtest{
		{"Host", s.testHost, nil},
		{"Image", s.testImage, nil},
		{"Sandbox", s.testSandbox, nil},
		{"ListPod", s.testListPod, nil},
		{"Lifecycle", s.testLifecycle, nil},
		{"Owner", s.testOwner, nil},
		{"Recovery", s.testRecovery, nil},
		{"Events", s.testEvents, nil},
		{"RemoveSandbox", s.testRemoveSandbox, nil},
		{"ExitCode", s.testExitCode, []need{procs}},
		{"ExitHints", s.testExitHints, []need{procs, {c.ExitHints, "gives no exit hints"}}},
		{"StopGrace", s.testStopGrace, []need{procs}},
		{"StopSignalLost", s.testStopSignalLost, []need{procs, {c.SignalCheck, "does not check signals"}}},
		{"ExecWhileStopping", s.testExecWhileStopping, []need{procs, exec}},
		{"Logs", s.testLogs, []need{procs}},
		{"Exec", s.testExec, []need{procs, exec}},
		{"Attach", s.testAttach, []need{procs, {c.Attach, "does not attach"}}},
		{"Stats", s.testStats, []need{procs}},
		{"PortForward", s.testPortForward, []need{procs, {c.PortForward, "does not forward ports"}}},
		{"Security", s.testSecurity, []need{procs}},
		{"ImageUser", s.testImageUser, []need{procs}},
		{"SandboxSysctlsAndPids", s.testSandboxSysctlsAndPids, []need{procs}},
		{"Resources", s.testResources, []need{procs}},
		{"UpdateResources", s.testUpdateResources, []need{procs}},
		{"OOMKilled", s.testOOMKilled, []need{procs}},
		{"UserNamespace", s.testUserNamespace, []need{procs, {c.UserNamespaces, "has no user namespaces"}}},
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newUID() string {
	b := randHex(16)
	return b[:8] + "-" + b[8:12] + "-" + b[12:16] + "-" + b[16:20] + "-" + b[20:]
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// sandbox creates a sandbox for the test and registers it for cleanup.
func (s *suite) sandbox(t *testing.T, name string) runtime.Sandbox {
	t.Helper()
	return s.sandboxOn(t, s.rt, s.owner, name)
}

// sandboxOn creates a sandbox through rt, for owner, as the core does: with
// the pod's identity labels; edit, if given, adds to its config.
func (s *suite) sandboxOn(t *testing.T, rt runtime.Runtime, owner, name string, edit ...func(*runtime.SandboxConfig)) runtime.Sandbox {
	t.Helper()
	uid := newUID()
	podName := s.prefix + "-" + strings.ToLower(name)
	labels := runtime.PodLabels(uid, Namespace, podName)
	labels["runtimetest.run"], labels[runtime.LabelOwner] = s.prefix, owner
	cfg := runtime.SandboxConfig{PodUID: uid, Namespace: Namespace, Name: podName, Hostname: s.prefix, Labels: labels}
	for _, e := range edit {
		e(&cfg)
	}
	switch {
	case s.caps.OwnNetwork || cfg.NetNS != "" || cfg.HostNetwork:
	case cfg.UserNS != nil || s.caps.NetworkBeside:
		s.net.attachLater(t, &cfg)
	default:
		s.net.attach(t, &cfg)
	}
	sb, err := rt.CreateSandbox(ctxT(t, time.Minute), cfg)
	if err != nil {
		t.Fatalf("CreateSandbox: %v", err)
	}
	if rt == s.rt {
		s.pods[uid] = sb.ID
	}
	return sb
}

// container creates and starts a container running cmd.
func (s *suite) container(t *testing.T, sb runtime.Sandbox, name string, cmd ...string) string {
	t.Helper()
	return s.containerWith(t, sb, runtime.ContainerConfig{Name: name, Image: Image, Command: cmd})
}

// containerWith creates and starts a container of cfg.
func (s *suite) containerWith(t *testing.T, sb runtime.Sandbox, cfg runtime.ContainerConfig) string {
	t.Helper()
	id := s.create(t, sb, cfg)
	if err := s.rt.StartContainer(ctxT(t, time.Minute), id); err != nil {
		t.Fatalf("StartContainer %s: %v", cfg.Name, err)
	}
	return id
}

func (s *suite) create(t *testing.T, sb runtime.Sandbox, cfg runtime.ContainerConfig) string {
	t.Helper()
	if cfg.Image == "" {
		cfg.Image = Image
	}
	cfg.Labels = s.containerLabels(sb, cfg)
	id, err := s.rt.CreateContainer(ctxT(t, time.Minute), sb.ID, cfg)
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", cfg.Name, err)
	}
	return id
}

// containerLabels are the labels the core gives a container of sb: the
// pod's identity and the owner, the container's own, and cfg's.
func (s *suite) containerLabels(sb runtime.Sandbox, cfg runtime.ContainerConfig) map[string]string {
	l := runtime.ContainerLabels(runtime.PodLabels(sb.PodUID, Namespace, sb.Name), cfg.Name, cfg.Attempt)
	l[runtime.LabelOwner] = s.owner
	for k, v := range cfg.Labels {
		l[k] = v
	}
	return l
}

// find returns the listed container with that ID.
func (s *suite) find(t *testing.T, id string) (runtime.Container, bool) {
	t.Helper()
	for _, c := range mustList(t, s) {
		if c.ID == id {
			return c, true
		}
	}
	return runtime.Container{}, false
}

// waitState polls List until the container reaches state.
func (s *suite) waitState(t *testing.T, id string, state runtime.ContainerState, timeout time.Duration) runtime.Container {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last runtime.Container
	for time.Now().Before(deadline) {
		c, ok := s.find(t, id)
		if ok && c.State == state {
			return c
		}
		last = c
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("container %s did not reach %s within %s; last seen %+v", id, state, timeout, last)
	return last
}

func (s *suite) cleanup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for uid, id := range s.pods {
		if err := s.rt.RemoveSandbox(ctx, id); err != nil {
			t.Errorf("cleanup: RemoveSandbox %s (pod %s): %v", id, uid, err)
		} else if err := s.rt.ReleasePod(ctx, uid); err != nil {
			t.Errorf("cleanup: ReleasePod %s: %v", uid, err)
		}
	}
	s.net.remove(t)
}
