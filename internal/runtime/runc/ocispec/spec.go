package ocispec

import (
	"fmt"
	"maps"
	"path"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
)

// Input is everything one container's spec is built from.
type Input struct {
	// ID is the container's ID: the name of its cgroup below the pod's.
	ID        string
	Pod       Pod
	Container runtime.ContainerConfig
	Image     ImageConfig
	// Rootfs is the container's prepared root filesystem: the spec's root,
	// and where a user or group name is looked up.
	Rootfs string
	// ImageRoots are the root filesystems of the images the container
	// mounts as volumes (runtime.Mount.Image), by image reference.
	ImageRoots map[string]string
	Host       Host
	// ProcessLabel and MountLabel are the container's SELinux labels, which
	// the backend allots from its seLinuxOptions and the pod's MCS level.
	// Empty: the host does not enforce SELinux.
	ProcessLabel, MountLabel string
}

// Pod is the sandbox a container joins.
type Pod struct {
	Config runtime.SandboxConfig
	// Net is the pod's network namespace; empty: Config.NetNS, the one the
	// core's pod network made.
	Net string
	// IPC, UTS and PID are the namespaces the sandbox's holder (its pause
	// process) keeps, as /proc/<pid>/ns/<type>. PID is joined only with
	// Config.ShareProcessNamespace.
	IPC, UTS, PID string
	// User is the pod's user namespace, which Config.UserNS maps; joined
	// only then.
	User string
	// Shm is the pod's /dev/shm, shared by its containers as their IPC
	// namespace is; empty: a tmpfs of the container's own.
	Shm string
	// CgroupParent is the pod's cgroup ("/runlet/pod<uid>", cgroupfs
	// style): every container's cgroup is a child of it.
	CgroupParent string
}

// ImageConfig is the part of an image's config a container's process
// starts from.
type ImageConfig struct {
	// User is "user[:group]", by name or ID; empty: root.
	User            string
	Env             []string
	Entrypoint, Cmd []string
	WorkingDir      string
}

// Host is what the host allows the containers runc starts.
type Host struct {
	// Cgroups are the host's cgroup version and swap accounting
	// (cgroups.Detect).
	Cgroups cgroups.Host
	// NoFileHard and NProcHard are the hard limits of the process that
	// runs runc: without CAP_SYS_RESOURCE a container cannot be given
	// more. Zero: unknown, the container inherits runc's own.
	NoFileHard, NProcHard uint64
	// CapSysResource: runc may raise rlimits and lower oom_score_adj.
	CapSysResource bool
	// OOMScoreAdj is runc's own oom_score_adj: without CAP_SYS_RESOURCE no
	// container may go below it.
	OOMScoreAdj int
	// Capabilities are runc's bounding set (BoundingSet): what a container
	// can get at most. Nil: every capability.
	Capabilities []string
	// Hostname is the node's: HOSTNAME of a pod on the host's network.
	Hostname string
	// Devices are the host's devices (HostDevices), which a privileged
	// container gets.
	Devices []specs.LinuxDevice
}

// Build returns the OCI runtime spec of in's container.
func Build(in Input) (*specs.Spec, error) {
	if in.ID == "" || in.Rootfs == "" {
		return nil, fmt.Errorf("container %s: a spec needs the container's ID and root filesystem", in.Container.Name)
	}
	if len(in.Container.Security.SELinuxOptions) > 0 && in.ProcessLabel == "" {
		// Running without the label asked for would be quietly less
		// confined.
		return nil, fmt.Errorf("container %s: SELinux options %v were given no label", in.Container.Name, in.Container.Security.SELinuxOptions)
	}
	proc, err := process(in)
	if err != nil {
		return nil, fmt.Errorf("container %s: %w", in.Container.Name, err)
	}
	proc.SelinuxLabel = in.ProcessLabel
	s := &specs.Spec{
		Version:     specs.Version,
		Process:     proc,
		Root:        &specs.Root{Path: in.Rootfs, Readonly: in.Container.Security.ReadOnlyRootfs},
		Hostname:    hostname(in.Pod.Config),
		Annotations: maps.Clone(in.Container.Labels),
		Linux:       &specs.Linux{CgroupsPath: path.Join(in.Pod.CgroupParent, in.ID), MountLabel: in.MountLabel},
	}
	// The capabilities are in the process by now: the seccomp profile
	// depends on them.
	for _, step := range []func(*specs.Spec, Input) error{setMounts, setNamespaces, setSysctls, setResources, setSeccomp} {
		if err := step(s, in); err != nil {
			return nil, fmt.Errorf("container %s: %w", in.Container.Name, err)
		}
	}
	return s, nil
}
