package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet/test/e2e/framework"
)

// heapTop is where runlet's Go heap sits (inuse_space, the largest holders),
// read from its /debug/pprof/heap through the apiserver's node proxy, as
// `kubectl get --raw` would, and summarised by `go tool pprof -top`.
func heapTop(n *node, pods int) string {
	raw, err := framework.Get(n.t).Client.CoreV1().RESTClient().Get().
		AbsPath("/api/v1/nodes", n.rl.NodeName, "proxy/debug/pprof/heap").DoRaw(n.ctx)
	if err != nil {
		return fmt.Sprintf("heap profile at %d pods: %v", pods, err)
	}
	f := filepath.Join(n.t.TempDir(), "heap.pb.gz")
	if err := os.WriteFile(f, raw, 0o644); err != nil {
		return fmt.Sprintf("heap profile at %d pods: %v", pods, err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=15", f).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("heap profile at %d pods: go tool pprof: %v: %s", pods, err, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "runlet's Go heap at rest with %d pods, largest holders (go tool pprof -top -sample_index=inuse_space):\n", pods)
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "File:") && !strings.HasPrefix(l, "Type:") && !strings.HasPrefix(l, "Time:") {
			b.WriteString("  " + l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
