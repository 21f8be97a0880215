/*
Copyright 2016 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package sysctl

// Copied from k8s.io/kubernetes v1.37.2 pkg/kubelet/sysctl/safe_sysctls.go,
// with the kernel versions of pkg/util/kernel/constants.go inlined; the
// kernel release is passed in rather than read by the package.

import (
	"k8s.io/apimachinery/pkg/util/version"
)

type sysctl struct {
	// the name of sysctl
	name string
	// the minimum kernel version where the sysctl is available
	kernel string
}

var safeSysctls = []sysctl{
	{
		name: "kernel.shm_rmid_forced",
	}, {
		name: "net.ipv4.ip_local_port_range",
	}, {
		name: "net.ipv4.tcp_syncookies",
	}, {
		name: "net.ipv4.ping_group_range",
	}, {
		name: "net.ipv4.ip_unprivileged_port_start",
	}, {
		name:   "net.ipv4.ip_local_reserved_ports",
		kernel: "3.16",
	}, {
		name:   "net.ipv4.tcp_keepalive_time",
		kernel: "4.5",
	}, {
		name:   "net.ipv4.tcp_fin_timeout",
		kernel: "4.6",
	},
	{
		name:   "net.ipv4.tcp_keepalive_intvl",
		kernel: "4.5",
	},
	{
		name:   "net.ipv4.tcp_keepalive_probes",
		kernel: "4.5",
	},
	{
		name:   "net.ipv4.tcp_rmem",
		kernel: "4.15",
	},
	{
		name:   "net.ipv4.tcp_wmem",
		kernel: "4.15",
	},
	{
		name:   "net.ipv4.tcp_slow_start_after_idle",
		kernel: "4.15",
	},
	{
		name:   "net.ipv4.tcp_notsent_lowat",
		kernel: "4.6",
	},
}

// SafeSysctlAllowlist returns the allowlist of safe sysctls and safe sysctl patterns (ending in *)
// on a kernel of the given release ("6.1.0-18-amd64"; empty or unparsable: only the sysctls
// every kernel has).
//
// A sysctl is called safe iff
// - it is namespaced in the container or the pod
// - it is isolated, i.e. has no influence on any other pod on the same node.
func SafeSysctlAllowlist(kernelRelease string) []string {
	kernelVersion, _ := version.ParseGeneric(kernelRelease)
	var safeSysctlAllowlist []string
	for _, sc := range safeSysctls {
		if sc.kernel == "" {
			safeSysctlAllowlist = append(safeSysctlAllowlist, sc.name)
			continue
		}
		if kernelVersion != nil && kernelVersion.AtLeast(version.MustParseGeneric(sc.kernel)) {
			safeSysctlAllowlist = append(safeSysctlAllowlist, sc.name)
		}
	}
	return safeSysctlAllowlist
}
