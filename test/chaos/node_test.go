package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// offlineStartAfter is the nodes' --offline-start-after: short, so that a reboot with the apiserver
// down brings the pods back soon, and long enough that a start with the apiserver up under load
// rarely takes the checkpoint's way.
const offlineStartAfter = 10 * time.Second

// node is the runlet under chaos and what the harness started for it alone: its podman service (on
// the podman backend) and its CNI plugin directory.
type node struct {
	t       *testing.T
	backend string
	rl      *framework.Runlet
	pm      *framework.PodmanService // nil on runc
	cni     *cniDir
	podCIDR *net.IPNet
}

func startNode(t *testing.T, backend string) *node {
	n := &node{t: t, backend: backend, cni: newCNIDir(t)}
	opts := framework.RunletOptions{LogLevel: os.Getenv("RUNLET_CHAOS_LOG_LEVEL"), Runtime: backend,
		ExtraArgs: []string{"--offline-start-after=" + offlineStartAfter.String(), "--network-plugin=kubenet", "--cni-bin-dir=" + n.cni.dir}}
	if backend == backendPodman {
		// A podman of the node's own: a reboot takes its runtime state, and its SIGKILL hits no
		// other test's pods.
		n.pm = framework.PrivatePodman(t)
		opts.PodmanSocket = n.pm.Socket
	}
	n.rl = framework.StartRunlet(t, opts)
	t.Cleanup(n.keepLogs)
	nd, err := framework.Get(t).Client.CoreV1().Nodes().Get(context.Background(), n.rl.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.podCIDR, err = framework.PodCIDR(nd); err != nil {
		t.Fatal(err)
	}
	return n
}

// cniDir is the node's --cni-bin-dir: the host's plugins, linked, but for bridge, which runs the
// host's bridge unless the file fail-add names a way to fail ADD:
//   - "before": ADD fails at once, with nothing set up;
//   - "after": the host's bridge runs ADD to the end (veth, address lease), then the plugin reports
//     an error, as a chained plugin failing after it would: what ADD made must be undone.
//
// Every ADD that failed appends a line to the file failed.
type cniDir struct {
	dir string
}

const bridgeWrapper = `#!/bin/sh
# the chaos soak's bridge: the host's, whose ADD fails while fail-add names a mode
dir=$(dirname "$0")
mode=$(cat "$dir/fail-add" 2>/dev/null)
if [ "$CNI_COMMAND" = ADD ] && [ -n "$mode" ]; then
	[ "$mode" = after ] && %[1]q >/dev/null
	echo "$CNI_CONTAINERID $mode" >>"$dir/failed"
	printf '{"cniVersion":"1.0.0","code":999,"msg":"chaos: the pod network ADD fails (%%s)"}\n' "$mode"
	exit 1
fi
exec %[1]q
`

func newCNIDir(t *testing.T) *cniDir {
	c := &cniDir{dir: t.TempDir()}
	var host string
	for _, d := range []string{"/opt/cni/bin", "/usr/lib/cni"} {
		if _, err := os.Stat(filepath.Join(d, "bridge")); err == nil {
			host = d
			break
		}
	}
	if host == "" {
		t.Fatal("no CNI bridge plugin in /opt/cni/bin or /usr/lib/cni (hack/install-deps.sh installs them)")
	}
	plugins, err := os.ReadDir(host)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plugins {
		if p.Name() != "bridge" {
			if err := os.Symlink(filepath.Join(host, p.Name()), filepath.Join(c.dir, p.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	script := fmt.Sprintf(bridgeWrapper, filepath.Join(host, "bridge"))
	if err := os.WriteFile(filepath.Join(c.dir, "bridge"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return c
}

// failAdd makes ADD fail in mode ("before" or "after"), or work again ("").
func (c *cniDir) failAdd(mode string) error {
	path := filepath.Join(c.dir, "fail-add")
	if mode == "" {
		return os.Remove(path)
	}
	return os.WriteFile(path, []byte(mode), 0o644)
}

// failures counts the ADDs that failed so far.
func (c *cniDir) failures() int {
	b, _ := os.ReadFile(filepath.Join(c.dir, "failed"))
	return strings.Count(string(b), "\n")
}

// startPodman starts the node's podman service again after a reboot (there is none on runc).
func (n *node) startPodman() {
	if n.pm == nil {
		return
	}
	if err := n.pm.Start(); err != nil {
		n.t.Fatalf("start the podman service: %v", err)
	}
}

// keepLogs copies, when the run failed, runlet's log and the podman service's into the framework's
// state dir, which outlives a failed run (the test's temp dirs do not).
func (n *node) keepLogs() {
	if !n.t.Failed() {
		return
	}
	dir := framework.Get(n.t).Dir
	logs := map[string]string{"runlet": n.rl.LogPath}
	if n.pm != nil {
		logs["podman"] = n.pm.LogPath
	}
	for name, path := range logs {
		keep := filepath.Join(dir, fmt.Sprintf("chaos-%s-%s.log", n.backend, name))
		if b, err := os.ReadFile(path); err == nil && os.WriteFile(keep, b, 0o644) == nil {
			progress(n.backend, "%s's log kept in %s", name, keep)
		}
	}
}
