package podman

import (
	"strings"

	"github.com/runlet/runlet/internal/runtime"
)

// defaultPathEnv is the PATH a container gets when its image sets none:
// containerd's (oci.WithDefaultPathEnv), the same as podman's.
const defaultPathEnv = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// containerEnv is the environment a kubelet's container runtime (containerd's
// CRI) gives a container, later entries winning: the default PATH, TERM=xterm
// with a TTY, the image's ENV, then the pod's (cfg.Env). podman adds HOSTNAME
// (the pod's host name) when none of them sets it, as containerd does. The
// spec also asks podman to drop its own defaults (unsetenvall), which would
// give every container container=podman and TERM=xterm, TTY or not.
func containerEnv(imageEnv []string, cfg runtime.ContainerConfig) map[string]string {
	env := map[string]string{}
	add := func(kvs ...string) {
		for _, kv := range kvs {
			k, v, _ := strings.Cut(kv, "=")
			if k != "" {
				env[k] = v
			}
		}
	}
	add(defaultPathEnv)
	if cfg.TTY {
		add("TERM=xterm")
	}
	add(imageEnv...)
	add(cfg.Env...)
	return env
}
