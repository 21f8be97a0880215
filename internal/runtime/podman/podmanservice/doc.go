// Package podmanservice runs `podman system service` for runlet: the
// backend's private service, and the e2e framework's and the bench's, so
// that tests run podman the way runlet does.
//
// A stock podman fails on hosts like runlet's own (cgroup v1 hybrid, no
// CAP_SYS_RESOURCE): crun refuses the cgroups and podman's default rlimits
// are above what the service may hand down. Containers get their OCI runtime
// and r_limits through the API, but a pod's infra container takes them only
// from containers.conf (podman 4.x). So the limits a service runs with, and
// the containers.conf runlet writes from them, live here beside the code that
// starts and stops the service. Nothing here knows Kubernetes.
package podmanservice
