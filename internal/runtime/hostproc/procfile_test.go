package hostproc

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestReadHostCPU(t *testing.T) {
	dir := t.TempDir()
	stat := filepath.Join(dir, "stat")
	// user nice system idle iowait irq softirq steal guest guest_nice
	_ = os.WriteFile(stat, []byte("cpu  100 2 30 5000 40 5 6 7 9 0\ncpu0 50 1 15 2500 20 2 3 3 4 0\nbtime 1700000000\n"), 0o644)
	h, err := ReadHostCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if h.Busy != 150 || h.Total != 5190 || !h.Boot.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("ReadHostCPU = %+v; want busy 150 (no idle, iowait or guest), total 5190, boot 1700000000", h)
	}
	_ = os.WriteFile(stat, []byte("intr 0\n"), 0o644)
	if _, err := ReadHostCPU(stat); err == nil {
		t.Error("a stat file without a cpu line read as fine")
	}
}
