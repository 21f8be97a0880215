package ocispec

import (
	"errors"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// process is the container's process: what runs, in which environment, as
// whom, with which privileges and limits.
func process(in Input) (*specs.Process, error) {
	c := in.Container
	args := processArgs(c, in.Image)
	if len(args) == 0 {
		return nil, errors.New("no command specified: neither the container nor its image names one")
	}
	user, err := processUser(in.Rootfs, c.Security, in.Image.User)
	if err != nil {
		return nil, err
	}
	caps, err := capabilities(c.Security, in.Host.Capabilities)
	if err != nil {
		return nil, err
	}
	return &specs.Process{
		Terminal:        c.TTY,
		User:            user,
		Args:            args,
		Env:             processEnv(in),
		Cwd:             workingDir(c, in.Image),
		Capabilities:    caps,
		Rlimits:         rlimits(in.Host),
		NoNewPrivileges: c.Security.NoNewPrivs,
		ApparmorProfile: c.Security.AppArmorProfile,
		OOMScoreAdj:     oomScoreAdj(c.Resources.OOMScoreAdj, in.Host),
	}, nil
}

// processArgs follows Kubernetes: a command replaces the image's
// entrypoint and drops its cmd; args replace the cmd and follow whichever
// entrypoint is in force.
func processArgs(c runtime.ContainerConfig, img ImageConfig) []string {
	entrypoint, cmd := img.Entrypoint, img.Cmd
	if len(c.Command) > 0 {
		entrypoint, cmd = c.Command, nil
	}
	if len(c.Args) > 0 {
		cmd = c.Args
	}
	return append(append([]string{}, entrypoint...), cmd...)
}

// workingDir is the container's, else the image's, else the root.
func workingDir(c runtime.ContainerConfig, img ImageConfig) string {
	switch {
	case c.WorkingDir != "":
		return c.WorkingDir
	case img.WorkingDir != "":
		return img.WorkingDir
	}
	return "/"
}

// defaultPath is the PATH of an image that sets none: containerd's
// (oci.WithDefaultPathEnv), the same as podman's.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// processEnv is the environment containerd's CRI gives a container, later
// entries winning: the default PATH, TERM=xterm with a TTY, HOSTNAME, the
// image's ENV, then the pod's. The podman backend sends podman the same.
func processEnv(in Input) []string {
	env := newEnvList()
	env.add(defaultPath)
	if in.Container.TTY {
		env.add("TERM=xterm")
	}
	if h := envHostname(in); h != "" {
		env.add("HOSTNAME=" + h)
	}
	env.add(in.Image.Env...)
	env.add(in.Container.Env...)
	return env.list()
}

// envHostname is the pod's host name, or the node's on the host's network.
func envHostname(in Input) string {
	if in.Pod.Config.HostNetwork {
		return in.Host.Hostname
	}
	return in.Pod.Config.Hostname
}

// envList keeps each variable where it first appeared, with its last value.
type envList struct {
	keys   []string
	values map[string]string
}

func newEnvList() *envList { return &envList{values: map[string]string{}} }

func (e *envList) add(kvs ...string) {
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			continue
		}
		if _, seen := e.values[k]; !seen {
			e.keys = append(e.keys, k)
		}
		e.values[k] = v
	}
}

func (e *envList) list() []string {
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.values[k])
	}
	return out
}
