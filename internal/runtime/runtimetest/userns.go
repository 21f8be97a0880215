package runtimetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

// usernsBase is the host range the test's pods are mapped to: high, so
// that no host user owns files in it.
const usernsBase = 1 << 30

// testUserNamespace: a pod with UserNS runs as the host range its mappings
// give, and sees its root filesystem and its bind mounts owned by its own
// root. What it writes to a bind mount is stored unshifted, owned by root
// on the host, as through containerd's idmapped mounts: another pod, with
// another range, sees it as its own root's too.
func (s *suite) testUserNamespace(t *testing.T) {
	one := []runtime.IDMapping{{ContainerID: 0, HostID: usernsBase, Length: 65536}}
	ns := &runtime.UserNamespace{UIDs: one, GIDs: one}
	// On the core's pod network, as runlet runs every local backend.
	sb := s.sandboxOn(t, s.rt, s.owner, "userns", func(c *runtime.SandboxConfig) {
		c.UserNS = ns
		s.net.attachLater(t, c)
	})
	if len(sb.IPs) == 0 || sb.NetNS == "" {
		t.Errorf("sandbox reports network %q %v: the network attached after its creation is lost", sb.NetNS, sb.IPs)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "cat /proc/self/uid_map; stat -c %u:%g /data/f /bin/busybox /; " +
		"touch /data/new /made && echo wrote; cat /data/f; echo; ls /sys/class/net"
	_, out := s.logsOf(t, sb, runtime.ContainerConfig{Name: "userns", Command: []string{"sh", "-c", script},
		Mounts: []runtime.Mount{{HostPath: dir, ContainerPath: "/data"}}})
	want := []string{fmt.Sprintf("0 %d 65536", usernsBase), "0:0\n0:0\n0:0", "wrote", "x", "lo"}
	for _, w := range want {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(w), " ")) {
			t.Errorf("output %q lacks %q", out, w)
		}
	}
	st, err := os.Stat(filepath.Join(dir, "new"))
	if err != nil {
		t.Fatalf("the file the pod's root made: %v", err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != 0 {
		t.Errorf("the file the pod's root made is owned by %d on the host; want 0 (unshifted)", uid)
	}
}
