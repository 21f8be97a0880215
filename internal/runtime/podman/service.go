package podman

import (
	"context"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime/cgroups"
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
	// Among runlet's helpers, the service and the monitors it starts
	// outlive the end of runlet's own cgroup (a supervisor's stop of
	// runlet), and the containers with them.
	dirs, err := cgroups.HelperDirs(cgroups.Root, nil)
	if err != nil {
		b.opts.Logf("podman service: stays in runlet's cgroup, and its containers' monitors with it: %v", err)
	}
	o.Cgroups = dirs
	return podmanservice.Start(ctx, o)
}
