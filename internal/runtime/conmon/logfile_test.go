package conmon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

func TestReadLog(t *testing.T) {
	opts := runtime.LogOptions{TailLines: -1}
	for _, path := range []string{"", filepath.Join(t.TempDir(), "absent.log")} {
		if used, err := ReadLog(context.Background(), path, opts, nil, nil, nil); used || err != nil {
			t.Errorf("ReadLog(%q) = %v, %v; want unused, so that the caller asks its runtime", path, used, err)
		}
	}
	path := filepath.Join(t.TempDir(), "ctr.log")
	if err := os.WriteFile(path, []byte("2026-11-30T11:59:58.094354542+00:00 stdout F hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if used, err := ReadLog(context.Background(), path, opts, &out, nil, nil); !used || err != nil || out.String() != "hello\n" {
		t.Errorf("ReadLog = %v, %v, %q; want the file's line", used, err, out.String())
	}
}
