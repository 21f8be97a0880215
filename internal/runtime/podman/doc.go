// Package podman is the runlet backend on podman's libpod REST API, served
// by podman 4.3 and 5.x over a unix socket, TCP or ssh, through package
// libpod's client.
//
// One Kubernetes pod is one podman pod whose infra container holds the
// shared ipc and uts namespaces, and the net namespace when the pod is on
// podman's own network; in a network namespace runlet's pod network made,
// each container joins that namespace by path (podman refuses a pod in a
// namespace given by path). A pod with a user namespace of its own is a
// podman pod with ID mappings whose infra makes the network namespace too,
// which its containers share (userns.go). Restarts, probes and grace periods stay
// in runlet: containers are created with restart_policy "no", and pods are
// removed with timeout=0 once runlet has stopped them with grace.
//
// Host quirks handled at start-up (see New):
//   - Without CAP_SYS_RESOURCE no container may get a hard rlimit above the
//     podman service's own, and podman lowers its RLIMIT_NPROC to 32768 when
//     it starts; podman's default (1048576 for nofile and nproc) then fails.
//     Every container gets r_limits clamped to the service's hard limits,
//     read from /proc/<pid>/limits of the process behind the socket
//     (SO_PEERCRED). With CAP_SYS_RESOURCE podman's defaults are kept.
//   - crun refuses hybrid cgroup v1 hosts; runc is used on cgroup v1 when
//     installed.
//   - The infra container takes neither an OCI runtime nor rlimits through
//     the API (podman 4.x), only from containers.conf. A service runlet starts
//     itself gets a containers.conf saying so; with a service run by someone
//     else a failing infra start returns podman's message and this hint.
//
// Known limits: podman's list reports start and exit times in whole seconds,
// so List inspects a container once per state change for the
// nanosecond times (and OOMKilled); Logs reads the k8s-file log on disk, as
// the kubelet does (the API's timestamps are whole seconds on podman 4.3, and
// its follower loses lines across a rotation), and falls back to the API when
// runlet cannot see the file; PortForward needs CAP_SYS_ADMIN (and, on
// podman's own network, the infra process in runlet's PID namespace) to reach loopback-only servers.
package podman
