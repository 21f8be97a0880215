package kuberuntime

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/runlet/runlet/internal/userns"
	v1 "k8s.io/api/core/v1"
)

// usernsBackend is the fake with user namespaces: as the runc backend, it
// makes the pod's network namespace and has the core attach it.
type usernsBackend struct {
	*runtimefake.Fake
}

const usernsNetNSSource = "/proc/4242/ns/net"

func (b usernsBackend) Capabilities() runtime.Capabilities {
	c := b.Fake.Capabilities()
	c.UserNamespaces, c.OwnNetwork = true, false
	return c
}

func (b usernsBackend) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	if cfg.UserNS != nil && cfg.AttachNetwork != nil {
		var err error
		if cfg.IPs, err = cfg.AttachNetwork(ctx, usernsNetNSSource); err != nil {
			return runtime.Sandbox{}, err
		}
	}
	return b.Fake.CreateSandbox(ctx, cfg)
}

// TestHostUsersFalse: the pod's sandbox gets a range of its own, the pod
// network is attached to the namespace the backend made, and a new
// sandbox of the same pod gets the same range.
func TestHostUsersFalse(t *testing.T) {
	var ns *userns.Manager
	e := newEnv(t, func(c *Config) {
		c.Runtime = usernsBackend{c.Runtime.(*runtimefake.Fake)}
		var err error
		if ns, err = userns.New(c.Dirs, userns.DefaultHostIDs); err != nil {
			t.Fatal(err)
		}
		c.UserNamespaces = ns
	})
	n := newFakeNetwork()
	e.m.network = n
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.HostUsers = no()
	started, failed := usernsCounts()
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if s, f := usernsCounts(); s != started+1 || f != failed {
		t.Errorf("started and failed user namespaced pods went from %v, %v to %v, %v; want one more started", started, failed, s, f)
	}
	sb := e.f.Sandboxes()[0]
	cfg, _ := e.f.SandboxConfig(sb.ID)
	if cfg.UserNS == nil || len(cfg.UserNS.UIDs) != 1 || cfg.UserNS.UIDs[0].Length != 65536 || cfg.UserNS.UIDs[0].HostID == 0 {
		t.Fatalf("sandbox user namespace %+v; want root mapped to a range of 65536", cfg.UserNS)
	}
	if a, ok := n.attached[sb.NetNS]; !ok || len(sb.IPs) != 1 || a.NetNSSource != usernsNetNSSource {
		t.Errorf("sandbox network %q %v, attached %+v; want the backend's namespace attached", sb.NetNS, sb.IPs, n.attached)
	}
	first := *cfg.UserNS

	if err := e.f.RemoveSandbox(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	cfg, _ = e.f.SandboxConfig(e.f.Sandboxes()[0].ID)
	if cfg.UserNS == nil || cfg.UserNS.UIDs[0] != first.UIDs[0] {
		t.Errorf("the new sandbox's user namespace %+v; want the pod's first, %+v", cfg.UserNS, first)
	}
}

// usernsCounts reads the kubelet's counters of user namespaced pods.
func usernsCounts() (started, failed float64) {
	return testutil.ToFloat64(telemetry.StartedUserNamespacedPods), testutil.ToFloat64(telemetry.StartedUserNamespacedPodsErrors)
}
