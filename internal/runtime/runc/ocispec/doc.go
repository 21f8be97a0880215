// Package ocispec builds the OCI runtime spec (config.json) of one container
// of a pod for the runc backend: from the sandbox's config and the paths of
// the namespaces its holder keeps, the container's config, the image's
// config, the prepared root filesystem and what the host allows.
//
// It applies what the podman backend asks podman for, so that a pod runs
// alike on both backends, and where podman and the CRI runtimes differ it
// says which it follows and why:
//   - process: Kubernetes' command/args rules against the image's
//     entrypoint and cmd; the environment containerd's CRI builds; the user
//     resolved in the image's /etc/passwd and /etc/group; podman's default
//     capabilities; nofile and nproc at podman's 1<<20, clamped to the host's
//     hard limits (without CAP_SYS_RESOURCE a higher one fails the start);
//     oom_score_adj no lower than the host lets it be;
//   - seccomp: the default profile of github.com/moby/profiles/seccomp, the
//     profile Docker, containerd and podman derive theirs from, kept in a
//     module of its own whose only dependencies are runtime-spec and
//     golang.org/x/sys. github.com/containers/common/pkg/seccomp has the same
//     profile but comes inside a module that requires some eighty others;
//   - cgroups: the kubelet's CPU quota, shares, memory (with no swap where
//     the host accounts it), pids, for cgroup v1 and v2, below the pod's
//     cgroup, from package cgroups, which translates them for podman too;
//   - mounts, masked and read-only paths, namespaces: those of containerd's
//     CRI, joining the pod's network, IPC and UTS namespaces by path.
//
// Build is pure but for reading the root filesystem's user database and a
// Localhost seccomp profile; what it needs to know of the host arrives in
// Host, which BoundingSet, HostDevices and cgroups.Detect help fill.
//
// Left to the backend: the spec of the process that holds the pod's
// namespaces, an /etc/hostname file (a mount like the core's /etc/hosts),
// cgroup paths for the systemd driver (cgroupfs paths only here), and the
// allotment of SELinux labels: Build sets those it is given, and refuses
// seLinuxOptions that came without one rather than ignore them.
package ocispec
