package runtimetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/netns"
	"github.com/runlet/runlet/internal/netns/loopback"
	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
)

// podNetwork plays the core's pod network for a backend without a network
// of its own (Capabilities.OwnNetwork): each sandbox gets a network
// namespace with loopback up, pinned as the core pins one, and an address
// from the documentation range, which the backend reports back.
type podNetwork struct {
	dir  string
	pins []string
}

// attach fills cfg's network as the core would.
func (n *podNetwork) attach(t *testing.T, cfg *runtime.SandboxConfig) {
	t.Helper()
	n.ensureDir(t)
	path := filepath.Join(n.dir, cfg.PodUID)
	if err := n.pinNew(path); err != nil {
		t.Fatalf("pod network namespace: %v", err)
	}
	cfg.NetNS, cfg.IPs = path, n.address()
}

// pinNew pins a new network namespace at path with loopback up, as the
// core's pod network makes one.
func (n *podNetwork) pinNew(path string) error {
	if err := netns.Pin(path); err != nil {
		return err
	}
	n.pins = append(n.pins, path)
	if err := netns.Do(path, loopback.Up); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	return nil
}

// attachLater gives cfg the core's AttachNetwork: the namespace the
// backend made (a pod with a user namespace of its own), or else a new
// one, is pinned where cfg.NetNS says, and gets an address.
func (n *podNetwork) attachLater(t *testing.T, cfg *runtime.SandboxConfig) {
	n.ensureDir(t)
	path := filepath.Join(n.dir, cfg.PodUID)
	cfg.NetNS = path // where it will be, as the core says
	cfg.AttachNetwork = func(_ context.Context, source string) ([]string, error) {
		if source == "" {
			if err := n.pinNew(path); err != nil {
				return nil, err
			}
			return n.address(), nil
		}
		if err := netns.PinFrom(source, path); err != nil {
			return nil, err
		}
		n.pins = append(n.pins, path)
		return n.address(), nil
	}
}

// address is the newest pin's address, from the documentation range.
func (n *podNetwork) address() []string {
	return []string{fmt.Sprintf("192.0.2.%d", len(n.pins)%250+1)}
}

func (n *podNetwork) ensureDir(t *testing.T) {
	t.Helper()
	if n.dir == "" {
		dir, err := os.MkdirTemp("/run", "runlet-rt-netns-")
		if err == nil {
			err = netns.EnsureSharedDir(dir)
		}
		if err != nil {
			t.Fatalf("a directory for the pods' network namespaces: %v", err)
		}
		n.dir = dir
	}
}

// remove takes the namespaces away, once their sandboxes are gone.
func (n *podNetwork) remove(t *testing.T) {
	for _, p := range n.pins {
		if err := netns.Remove(p); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	if n.dir != "" {
		_ = unix.Unmount(n.dir, unix.MNT_DETACH) // EnsureSharedDir's bind
		_ = os.Remove(n.dir)
	}
}
