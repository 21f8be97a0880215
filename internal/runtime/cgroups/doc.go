// Package cgroups is the cgroup mechanics every backend needs, in one place
// so that a pod gets the same limits on each: what the host's cgroups
// offer (Detect), the kubelet's translation of a container's or a pod's
// resources into OCI LinuxResources as its CRI runtimes apply them
// (Resources, and UpdateResources for a change in place), and each pod's
// own cgroup, which runlet makes, sets and removes as the kubelet's pod
// cgroup manager does (PodCgroup; WritePod for a pod cgroup the backend's
// runtime made but cannot change), and where the processes that keep pods
// are made, out of runlet's own cgroup (HelperDirs, StartIn).
//
// It speaks the OCI runtime-spec types, which runc takes in config.json and
// podman's API takes as resource_limits and as the body of a container
// update, and holds only the kubelet's and the kernel's numbers: a backend's
// own quirks stay in the backend.
package cgroups
