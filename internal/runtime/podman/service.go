package podman

import (
	"context"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

// startService starts the backend's private service, imposing cfg. Its
// socket, containers.conf and log sit side by side in dir, where an operator
// who set RunDir looks for them.
func (b *Backend) startService(ctx context.Context, dir string, cfg podmanservice.Config) (*podmanservice.Service, error) {
	o := podmanservice.Options{
		Podman: b.opts.PodmanPath, Listen: "unix://" + filepath.Join(dir, "podman.sock"),
		LogPath: filepath.Join(dir, "service.log"), ReadyTimeout: b.opts.StartTimeout,
	}
	if !cfg.Empty() {
		o.ContainersConf = filepath.Join(dir, "containers.conf")
		if err := cfg.Save(o.ContainersConf); err != nil {
			return nil, err
		}
	}
	return podmanservice.Start(ctx, o)
}
