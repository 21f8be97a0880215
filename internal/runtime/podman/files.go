package podman

import (
	"context"
	"os"

	"github.com/runlet/runlet/internal/runtime"
)

// ContainerFiles implements runtime.Files from the cached inspect: where
// the container keeps its log (k8s-file driver, when visible here) and its
// writable layer (overlay). Log rotation asks for every running container
// every few seconds, so it costs no API call once the container was seen.
func (b *Backend) ContainerFiles(ctx context.Context, id string) (runtime.ContainerFiles, error) {
	d, err := b.detail(ctx, id)
	if err != nil {
		return runtime.ContainerFiles{}, err
	}
	logPath := d.logPath
	if _, err := os.Stat(logPath); logPath != "" && err != nil {
		logPath = "" // podman's storage is not visible here (runlet in a container)
	}
	return runtime.ContainerFiles{LogPath: logPath, RootfsDir: d.rootfsDir}, nil
}
