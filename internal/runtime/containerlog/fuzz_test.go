package containerlog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// FuzzRead: whatever a log file holds (conmon's format, truncated writes,
// garbage), reading it with any tail/since/limit never panics, and a limit
// on bytes is kept.
func FuzzRead(f *testing.F) {
	f.Add([]byte(sample), int64(-1), int64(0), int64(0), false)
	f.Add([]byte(sample), int64(2), int64(0), int64(5), true)
	f.Add([]byte("2026-11-30T11:59:58Z stdout P par"), int64(1), int64(0), int64(0), false)
	f.Add([]byte("garbage\n\n\x00 stdout F x\n2026 stderr F y\n"), int64(0), int64(1), int64(3), true)
	f.Fuzz(func(t *testing.T, data []byte, tail, sinceSec, limit int64, stamps bool) {
		p := filepath.Join(t.TempDir(), "ctr.log")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		opts := runtime.LogOptions{TailLines: tail, LimitBytes: limit, Timestamps: stamps}
		if sinceSec > 0 {
			opts.Since = time.Unix(sinceSec%(1<<33), 0)
		}
		var out, errb bytes.Buffer
		if err := Read(context.Background(), p, opts, &out, &errb, nil); err != nil {
			return
		}
		if limit > 0 && int64(out.Len()+errb.Len()) > limit {
			t.Fatalf("read %d bytes with a limit of %d", out.Len()+errb.Len(), limit)
		}
	})
}
