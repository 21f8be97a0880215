package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// heapTop is where runlet's Go heap sits (inuse_space, the largest holders),
// read from its kubelet port's /debug/pprof/heap with the cluster admin's
// credentials and summarised by `go tool pprof -top`.
func heapTop(n *node, pods int) string {
	raw, err := n.rl.KubeletGet("/debug/pprof/heap")
	if err != nil {
		return fmt.Sprintf("heap profile at %d pods: %v", pods, err)
	}
	f := filepath.Join(n.t.TempDir(), "heap.pb.gz")
	if err := os.WriteFile(f, []byte(raw), 0o644); err != nil {
		return fmt.Sprintf("heap profile at %d pods: %v", pods, err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=15", f).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("heap profile at %d pods: go tool pprof: %v: %s", pods, err, out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "runlet's Go heap at rest with %d pods, largest holders (go tool pprof -top -sample_index=inuse_space):\n", pods)
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "File:") && !strings.HasPrefix(l, "Build ID:") && !strings.HasPrefix(l, "Type:") && !strings.HasPrefix(l, "Time:") {
			b.WriteString("  " + l + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
