package kubelet

import (
	"os"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/stats"
)

// newStats measures runlet's root dir as the node filesystem and podman's
// storage, when it is on this host, as the image filesystem; the pods'
// volumes under the root dir, and the containers' logs and writable layers.
func newStats(cfg Config, k *Kubelet, host runtime.HostInfo, files runtime.Files) *stats.Collector {
	k.nodeFs, k.imageFs = StoragePath(cfg.RootDir), host.StorageRoot
	if _, err := os.Stat(k.imageFs); k.imageFs == "" || err != nil {
		k.imageFs = k.nodeFs
	}
	return stats.New(stats.Config{
		NodeName: cfg.NodeName, Backend: k.backend, Pods: k.runtimePods,
		NodeFsPath: k.nodeFs, ImageFsPath: k.imageFs, Dirs: poddir.New(cfg.RootDir), Files: files,
	})
}

// StoragePath is the node's filesystem as runlet measures it: the root
// dir, else podman's storage, else /.
func StoragePath(rootDir string) string {
	for _, p := range []string{rootDir, "/var/lib/containers", "/"} {
		if p != "" && dirExists(p) {
			return p
		}
	}
	return "/"
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
