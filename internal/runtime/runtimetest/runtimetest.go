// Package runtimetest is the conformance suite every runlet backend passes
// against the real thing: it speaks only the runtime contract.
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

// Image is the test image the suite needs (built by hack/images.sh): a
// busybox with sh, sleep, cat, httpd and nc.
const Image = "localhost/runlet/busybox:latest"

// Namespace is the pod namespace of everything the suite creates.
const Namespace = "runtimetest"

// suite carries one run's identity so that it touches only its own objects,
// even when other runs share the backend.
type suite struct {
	rt     runtime.Runtime
	prefix string
	pods   map[string]string // pod UID -> sandbox ID
}

// Run exercises the contract against rt. Every sandbox it creates is
// removed when the test ends, whatever happens.
func Run(t *testing.T, rt runtime.Runtime) {
	s := &suite{rt: rt, prefix: "rt" + randHex(4), pods: map[string]string{}}
	t.Cleanup(func() { s.cleanup(t) })
	t.Run("Host", s.testHost)
	t.Run("Image", s.testImage)
	t.Run("Sandbox", s.testSandbox)
	t.Run("ListPod", s.testListPod)
	t.Run("Lifecycle", s.testLifecycle)
	t.Run("ExitCode", s.testExitCode)
	t.Run("StopGrace", s.testStopGrace)
	t.Run("StopSignalLost", s.testStopSignalLost)
	t.Run("ExecWhileStopping", s.testExecWhileStopping)
	t.Run("Events", s.testEvents)
	t.Run("Logs", s.testLogs)
	t.Run("Exec", s.testExec)
	t.Run("Attach", s.testAttach)
	t.Run("Stats", s.testStats)
	t.Run("PortForward", s.testPortForward)
	t.Run("RemoveSandbox", s.testRemoveSandbox)
	t.Run("Security", s.testSecurity)
	t.Run("ImageUser", s.testImageUser)
	t.Run("SandboxSysctlsAndPids", s.testSandboxSysctlsAndPids)
	t.Run("Resources", s.testResources)
	t.Run("UpdateResources", s.testUpdateResources)
	t.Run("OOMKilled", s.testOOMKilled)
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
	uid := newUID()
	cfg := runtime.SandboxConfig{PodUID: uid, Namespace: Namespace, Name: s.prefix + "-" + strings.ToLower(name),
		Hostname: s.prefix, Labels: map[string]string{"runtimetest.run": s.prefix}}
	sb, err := s.rt.CreateSandbox(ctxT(t, time.Minute), cfg)
	if err != nil {
		t.Fatalf("CreateSandbox: %v", err)
	}
	s.pods[uid] = sb.ID
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
	id, err := s.rt.CreateContainer(ctxT(t, time.Minute), sb.ID, cfg)
	if err != nil {
		t.Fatalf("CreateContainer %s: %v", cfg.Name, err)
	}
	return id
}

// find returns the listed container with that ID.
func (s *suite) find(t *testing.T, id string) (runtime.Container, bool) {
	t.Helper()
	cs, err := s.rt.ListContainers(ctxT(t, 30*time.Second))
	if err != nil {
		t.Fatalf("ListContainers: %v", err)
	}
	for _, c := range cs {
		if c.ID == id {
			return c, true
		}
	}
	return runtime.Container{}, false
}

// waitState polls ListContainers until the container reaches state.
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
		}
	}
}
