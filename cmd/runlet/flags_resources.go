package main

import (
	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
)

// addResourceFlags are the kubelet's flags for node allocatable, pod limits
// and pod security.
func addResourceFlags(fs *pflag.FlagSet, o *options) {
	fs.Var(cliflag.NewMapStringString(&o.SystemReserved), "system-reserved",
		"resources kept for the system, not for pods: cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000 (node allocatable = capacity - reserved)")
	fs.Var(cliflag.NewMapStringString(&o.KubeReserved), "kube-reserved",
		"resources kept for Kubernetes components, as --system-reserved")
	fs.Int64Var(&o.PodMaxPids, "pod-max-pids", -1, "maximum number of processes in each pod (its cgroup's pids.max); -1: unlimited")
	fs.StringSliceVar(&o.AllowedUnsafeSysctls, "allowed-unsafe-sysctls", nil,
		"unsafe sysctls or sysctl patterns (ending in *) pods may set besides the safe ones, comma-separated (kernel.msg*,net.core.somaxconn)")
	fs.BoolVar(&o.SeccompDefault, "seccomp-default", false, "run containers without a seccompProfile under the runtime's default profile instead of Unconfined")
}
