package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/network/cni"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// PodNetwork wires pods into the node's pod network (internal/network/cni):
// a namespace of the pod's own, set up before its sandbox and torn down
// after it.
type PodNetwork interface {
	Setup(ctx context.Context, pod cni.Pod) (cni.Attachment, error)
	// Alive reports whether a sandbox's namespace is still there to join.
	Alive(netns string) bool
	// Commit says the sandbox in netns exists: a sweep for leftovers may
	// now judge the attachment by the backend's list.
	Commit(netns string)
	Teardown(ctx context.Context, netns string) error
	// NewNetNSPath is where a namespace the backend makes will be pinned
	// (cni.Pod.NetNSPath), known before its sandbox exists.
	NewNetNSPath() string
}

// networkNotReady is the kubelet's event reason and message prefix for a
// pod that cannot start while the node's network is not ready.
const networkNotReady = "network is not ready"

// attachNetwork gives a pod that is not on the host's network its own
// namespace on the pod network, and the sandbox joins it. Without a pod
// network (a remote backend) the backend's own serves. A pod in a user
// namespace of its own gets its network once the backend has made the
// namespace inside it (runtime.SandboxConfig.AttachNetwork). With a
// backend that makes a sandbox beside its network
// (Capabilities.NetworkBeside), the set-up starts now and the backend
// takes its addresses. wait, never nil, ends with the set-up: a sandbox
// that is not made waits for it before its network is released.
func (m *Manager) attachNetwork(ctx context.Context, pod *v1.Pod, cfg *runtime.SandboxConfig) (wait func() error, err error) {
	wait = func() error { return nil }
	if m.network == nil || pod.Spec.HostNetwork {
		return wait, nil
	}
	p := cni.Pod{UID: string(pod.UID), Namespace: pod.Namespace, Name: pod.Name}
	for _, pm := range cfg.Ports {
		p.Ports = append(p.Ports, cni.PortMapping{HostPort: pm.HostPort, ContainerPort: pm.ContainerPort, Protocol: pm.Protocol, HostIP: pm.HostIP})
	}
	for k, v := range cfg.Sysctls {
		if strings.HasPrefix(k, "net.") {
			if p.Sysctls == nil {
				p.Sysctls = map[string]string{}
			}
			p.Sysctls[k] = v
		}
	}
	switch {
	case cfg.UserNS != nil:
		cfg.NetNS = m.network.NewNetNSPath()
		cfg.AttachNetwork = func(ctx context.Context, source string) ([]string, error) {
			p.NetNSSource, p.NetNSPath = source, cfg.NetNS
			err := m.setUpNetwork(ctx, pod, p, cfg)
			return cfg.IPs, err
		}
		return wait, nil
	case m.caps.NetworkBeside:
		cfg.NetNS = m.network.NewNetNSPath()
		p.NetNSPath = cfg.NetNS
		ips := m.setUpInBackground(ctx, pod, p)
		cfg.AttachNetwork = func(context.Context, string) ([]string, error) { return ips() }
		return func() error { _, err := ips(); return err }, nil
	}
	return wait, m.setUpNetwork(ctx, pod, p, cfg)
}

// setUpInBackground runs setUpNetwork for p off the caller's goroutine; the
// function it returns waits for the addresses.
func (m *Manager) setUpInBackground(ctx context.Context, pod *v1.Pod, p cni.Pod) func() ([]string, error) {
	type result struct {
		ips []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var cfg runtime.SandboxConfig // the caller's is the backend's by now
		err := m.setUpNetwork(ctx, pod, p, &cfg)
		done <- result{cfg.IPs, err}
	}()
	return sync.OnceValues(func() ([]string, error) {
		r := <-done
		return r.ips, r.err
	})
}

// setUpNetwork runs the pod network's set-up and gives cfg its result.
func (m *Manager) setUpNetwork(ctx context.Context, pod *v1.Pod, p cni.Pod, cfg *runtime.SandboxConfig) error {
	a, err := m.network.Setup(ctx, p)
	if err != nil {
		var nr cni.NotReadyError
		if errors.As(err, &nr) {
			m.event(pod, v1.EventTypeWarning, "NetworkNotReady", "%s: %v", networkNotReady, err)
			return fmt.Errorf("%s: %w", networkNotReady, err)
		}
		m.event(pod, v1.EventTypeWarning, "FailedCreatePodSandBox",
			"Failed to create pod sandbox: failed to set up sandbox network for pod %q: %v", pod.Name, err)
		return fmt.Errorf("create sandbox: setting up the pod network: %w", err)
	}
	cfg.NetNS, cfg.IPs = a.NetNS, a.IPs
	return nil
}

// releaseNetwork releases the network set up for a sandbox that was not
// made or did not start; a failure is only logged, as the network sweep
// takes what is left.
func (m *Manager) releaseNetwork(ctx context.Context, pod *v1.Pod, netns string) {
	if err := m.detachNetwork(context.WithoutCancel(ctx), netns); err != nil {
		m.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("releasing the network of a sandbox that did not come up failed")
	}
}

// networkGone reports a sandbox whose pod network namespace is no more: a
// create that failed after the backend made the pod, or a reboot.
func (m *Manager) networkGone(sb *runtime.Sandbox) bool {
	return m.network != nil && sb.NetNS != "" && !m.network.Alive(sb.NetNS)
}

// detachNetwork releases a sandbox's pod network once the sandbox is gone.
func (m *Manager) detachNetwork(ctx context.Context, netns string) error {
	if m.network == nil || netns == "" {
		return nil
	}
	if err := m.network.Teardown(ctx, netns); err != nil {
		return fmt.Errorf("tearing down the pod network: %w", err)
	}
	return nil
}

// networkGCPeriod spaces the sweeps for pod networks no sandbox holds: one
// backend list each.
const networkGCPeriod = time.Minute

// NetworkCollector is a pod network that can release what no sandbox holds.
type NetworkCollector interface {
	GC(ctx context.Context, live map[string]bool, listed time.Time)
}

// gcNetwork releases, at most once per networkGCPeriod and off the
// caller's goroutine, the pod networks of sandboxes that went without their
// teardown: runlet was down, or the teardown failed.
func (m *Manager) gcNetwork() {
	gc, ok := m.network.(NetworkCollector)
	if !ok {
		return
	}
	m.mu.Lock()
	due := time.Since(m.networkGCAt) >= networkGCPeriod
	if due {
		m.networkGCAt = time.Now()
	}
	m.mu.Unlock()
	if !due {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), networkGCPeriod)
		defer cancel()
		listed := time.Now()
		sbs, _, err := m.rt.List(ctx, runtime.ListFilter{})
		if err != nil {
			m.log.WithError(err).Debug("pod network GC: listing sandboxes failed")
			return
		}
		live := make(map[string]bool, len(sbs))
		for _, sb := range sbs {
			live[sb.NetNS] = true
		}
		gc.GC(ctx, live, listed)
	}()
}
