package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write makes the directory, replaces what was there, leaves no temporary
// file behind, and keeps the file its owner's alone.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "f")
	for _, data := range []string{"first", "second"} {
		if err := Write(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Errorf("directory holds %v (%v); want the file alone", entries, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}
