package main

import (
	"fmt"
	"path/filepath"

	"github.com/runlet/runlet/internal/admission"
	"github.com/runlet/runlet/internal/eviction"
	"github.com/runlet/runlet/internal/kubelet"
	"github.com/runlet/runlet/internal/kuberuntime"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/sysctl"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
)

// nodeResources are the node's capacity, what it reserves (--system-reserved,
// --kube-reserved, the hard eviction thresholds), and what pods may use: the
// kubelet's node allocatable.
type nodeResources struct {
	capacity, allocatable v1.ResourceList
	reserved              []v1.ResourceList
}

func newNodeResources(o *options, log *logrus.Entry) (nodeResources, error) {
	var r nodeResources
	for _, f := range o.reserved {
		if _, ok := f.list[nodeinfo.ResourcePID]; ok {
			log.Warnf("%s: the pid reservation is accepted but not enforced: runlet has no node-level cgroup for pods (use --pod-max-pids)", f.flag)
		}
		r.reserved = append(r.reserved, f.list)
	}
	capacity, err := nodeinfo.Capacity(nodeinfo.Options{MaxPods: o.MaxPods, StoragePath: kubelet.StoragePath(o.RootDir)})
	if err != nil {
		return r, err
	}
	// The hard eviction thresholds of memory and disk are kept from pods
	// too, as the kubelet's allocatable keeps them.
	r.reserved = append(r.reserved, eviction.HardEvictionReservation(o.evictionThresholds, capacity))
	r.capacity, r.allocatable = capacity, nodeinfo.Allocatable(capacity, r.reserved...)
	return r, nil
}

// runtimeOptions are the node-wide settings of containers' configs.
func (r nodeResources) runtimeOptions(o *options) kuberuntime.NodeOptions {
	return kuberuntime.NodeOptions{
		Allocatable:    r.allocatable,
		MemoryCapacity: r.capacity.Memory().Value(),
		PodPidsLimit:   o.PodMaxPids,
		SeccompRoot:    filepath.Join(o.RootDir, "seccomp"),
		SeccompDefault: o.SeccompDefault,
		AppArmor:       nodeinfo.AppArmorEnabled(),
		SELinux:        nodeinfo.SELinuxEnabled(),
	}
}

// admitter is the node's admission: the sysctl allowlist of this kernel and
// --allowed-unsafe-sysctls, the resource fit against allocatable, AppArmor.
func (r nodeResources) admitter(o *options, host runtime.HostInfo) (*admission.Admitter, error) {
	allow, err := sysctl.NewAllowlist(host.KernelVersion, o.AllowedUnsafeSysctls)
	if err != nil {
		return nil, fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	return admission.New(admission.Config{Allocatable: r.allocatable, Sysctls: allow, AppArmor: nodeinfo.AppArmorEnabled()}), nil
}
