// Package atomicfile replaces a file so that a crash at any moment leaves
// the old file or the new one, never a part of either: what runlet keeps on
// disk (its node's kubeconfig and CA, the runc image index) is read back
// after a SIGKILL or a power loss.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, readable by its owner only: a temporary
// file in path's directory (so the rename stays on one filesystem), synced,
// renamed over path, and the directory synced so the rename itself lasts.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
