package runc

import (
	"os"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime/overlay"
)

// mountRootfs mounts a container's root filesystem at target: an overlay
// of the image's layers (base first) under a writable layer of its own in
// bundle/upper.
func mountRootfs(bundle, target string, layers []string) error {
	upper, work := filepath.Join(bundle, "upper"), filepath.Join(bundle, "work")
	for _, d := range []string{upper, work, target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if len(layers) == 0 {
		// An image of no layers is an empty directory: the upper layer alone.
		empty := filepath.Join(bundle, "empty")
		if err := os.MkdirAll(empty, 0o755); err != nil {
			return err
		}
		layers = []string{empty}
	}
	return overlay.Mount(target, layers, ",upperdir="+upper+",workdir="+work, 0)
}
