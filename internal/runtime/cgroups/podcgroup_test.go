package cgroups

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

func TestWritePodV2(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pod1")
	mkdir(t, dir)
	h := Host{V2: true}
	if err := WritePod(root, "pod1", h, UpdateResources(runtime.Resources{CPUMillis: 250, CPUShares: 1024, MemoryBytes: 64 << 20}, h)); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, dir, map[string]string{"cpu.weight": "39", "cpu.max": "25000 100000", "memory.max": "67108864"})
	// Lifted limits are v2's "max"; shares 2 are the least weight.
	if err := WritePod(root, "pod1", h, UpdateResources(runtime.Resources{}, h)); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, dir, map[string]string{"cpu.weight": "1", "cpu.max": "max 100000", "memory.max": "max"})
}

func TestWritePodV1(t *testing.T) {
	root := t.TempDir()
	cpu, mem := filepath.Join(root, "cpu", "pod1"), filepath.Join(root, "memory", "pod1")
	mkdir(t, cpu)
	mkdir(t, mem)
	h := Host{SwapLimit: true}
	if err := WritePod(root, "pod1", h, UpdateResources(runtime.Resources{CPUMillis: 250, CPUShares: 256, MemoryBytes: 64 << 20}, h)); err != nil {
		t.Fatal(err)
	}
	wantFiles(t, cpu, map[string]string{"cpu.shares": "256", "cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": "25000"})
	wantFiles(t, mem, map[string]string{"memory.limit_in_bytes": "67108864", "memory.memsw.limit_in_bytes": "67108864"})
}

// TestV1SwapOrder: the kernel refuses a memory+swap limit below the memory
// limit, so memsw goes first when raising and last when lowering.
func TestV1SwapOrder(t *testing.T) {
	root := t.TempDir()
	mem := filepath.Join(root, "memory", "pod1")
	mkdir(t, mem)
	h := Host{SwapLimit: true}
	for _, tc := range []struct {
		name      string
		cur       string
		r         runtime.Resources
		swapFirst bool
	}{
		{"raising", "1048576", runtime.Resources{MemoryBytes: 2 << 20}, true},
		{"lifting", "1048576", runtime.Resources{}, true},
		{"lowering", "4194304", runtime.Resources{MemoryBytes: 2 << 20}, false},
		{"unreadable: as if raising", "", runtime.Resources{MemoryBytes: 2 << 20}, true},
	} {
		if tc.cur != "" {
			writeFile(t, filepath.Join(mem, "memory.limit_in_bytes"), tc.cur)
		} else {
			_ = os.Remove(filepath.Join(mem, "memory.limit_in_bytes"))
		}
		files := v1Files(root, "pod1", UpdateResources(tc.r, h))
		memFiles := files[3:]
		if first := filepath.Base(memFiles[0][0]) == "memory.memsw.limit_in_bytes"; first != tc.swapFirst || len(memFiles) != 2 {
			t.Errorf("%s: memory files %v; want memsw first: %v", tc.name, memFiles, tc.swapFirst)
		}
	}
}

// An update lacking a limit is refused rather than half written.
func TestWritePodIncomplete(t *testing.T) {
	lr := Resources(runtime.Resources{CPUShares: 2}, Host{}, false)
	if err := WritePod(t.TempDir(), "pod1", Host{}, lr); err == nil || !strings.Contains(err.Error(), "must state") {
		t.Errorf("a partial update: %v; want refused", err)
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantFiles(t *testing.T, dir string, want map[string]string) {
	t.Helper()
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if got := string(b); err != nil || got != w {
			t.Errorf("%s = %q (%v); want %q", name, got, err, w)
		}
	}
}
