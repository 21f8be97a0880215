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

// Package sysctl is the kubelet's sysctl admission: the safe sysctls every
// pod may set, plus those the node allows with --allowed-unsafe-sysctls.
//
// Copied from k8s.io/kubernetes v1.37.2 pkg/kubelet/sysctl (allowlist.go,
// safe_sysctls.go) with the pattern check of pkg/apis/policy/validation;
// Admit returns the reason and message instead of a lifecycle.PodAdmitResult.
// runlet does not import k8s.io/kubernetes.
package sysctl

import (
	"fmt"
	"regexp"
	"strings"

	v1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

const (
	// ForbiddenReason is the pod status reason of a refused sysctl.
	ForbiddenReason = "SysctlForbidden"

	// sysctlMaxLength and the patterns are pkg/apis/core/validation's and
	// pkg/apis/policy/validation's.
	sysctlMaxLength              = 253
	sysctlSegmentFmt             = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	sysctlPatternSegmentFmt      = "([a-z0-9][-_a-z0-9]*)?[a-z0-9*]"
	sysctlContainSlashPatternFmt = "(" + sysctlSegmentFmt + "[\\./])*" + sysctlPatternSegmentFmt
)

var sysctlContainSlashPatternRegexp = regexp.MustCompile("^" + sysctlContainSlashPatternFmt + "$")

// isValidSysctlPattern checks if name is a valid sysctl pattern.
func isValidSysctlPattern(name string) bool {
	if len(name) > sysctlMaxLength {
		return false
	}
	return sysctlContainSlashPatternRegexp.MatchString(name)
}

// patternAllowlist takes a list of sysctls or sysctl patterns (ending in *) and
// checks validity via a sysctl and prefix map, rejecting those which are not known
// to be namespaced.
type patternAllowlist struct {
	sysctls  map[string]utilsysctl.Namespace
	prefixes map[string]utilsysctl.Namespace
}

// Allowlist decides which sysctls a pod may set.
type Allowlist struct {
	w *patternAllowlist
}

// NewAllowlist returns the kubelet's allowlist: the safe sysctls of this
// kernel plus the unsafe ones (or patterns ending in *) the node allows.
func NewAllowlist(kernelRelease string, allowedUnsafe []string) (*Allowlist, error) {
	w, err := newPatternAllowlist(append(SafeSysctlAllowlist(kernelRelease), allowedUnsafe...))
	if err != nil {
		return nil, err
	}
	return &Allowlist{w: w}, nil
}

// newPatternAllowlist creates a new Allowlist from a list of sysctls and sysctl pattern (ending in *).
func newPatternAllowlist(patterns []string) (*patternAllowlist, error) {
	w := &patternAllowlist{
		sysctls:  map[string]utilsysctl.Namespace{},
		prefixes: map[string]utilsysctl.Namespace{},
	}

	for _, s := range patterns {
		if !isValidSysctlPattern(s) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s",
				s,
				sysctlMaxLength,
				sysctlContainSlashPatternFmt,
			)
		}
		ns, sysctlOrPrefix, prefixed := utilsysctl.GetNamespace(s)
		if ns == utilsysctl.UnknownNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", sysctlOrPrefix)
		}
		if prefixed {
			w.prefixes[sysctlOrPrefix] = ns
		} else {
			w.sysctls[sysctlOrPrefix] = ns
		}
	}
	return w, nil
}

// validateSysctl checks that a sysctl is allowlisted because it is known
// to be namespaced by the Linux kernel. Note that being allowlisted is required, but not
// sufficient: the container runtime might have a stricter check and refuse to launch a pod.
//
// The parameters hostNet, hostIPC, and hostUsers are used to forbid sysctls for pod sharing the
// respective namespaces with the host. This check is only possible for sysctls on
// the static default allowlist, not those on the custom allowlist provided by the admin.
func (w *patternAllowlist) validateSysctl(sysctl string, hostNet, hostIPC, hostUsers bool) error {
	sysctl = utilsysctl.NormalizeName(sysctl)
	nsErrorFmt := "%q not allowed with host %s enabled"
	if ns, found := w.sysctls[sysctl]; found {
		if ns == utilsysctl.IPCNamespace && hostIPC {
			return fmt.Errorf(nsErrorFmt, sysctl, ns)
		}
		if ns == utilsysctl.NetNamespace && hostNet {
			return fmt.Errorf(nsErrorFmt, sysctl, ns)
		}
		if ns == utilsysctl.UserNamespace && hostUsers {
			return fmt.Errorf(nsErrorFmt, sysctl, ns)
		}
		return nil
	}
	for p, ns := range w.prefixes {
		if strings.HasPrefix(sysctl, p) {
			if ns == utilsysctl.IPCNamespace && hostIPC {
				return fmt.Errorf(nsErrorFmt, sysctl, ns)
			}
			if ns == utilsysctl.NetNamespace && hostNet {
				return fmt.Errorf(nsErrorFmt, sysctl, ns)
			}
			if ns == utilsysctl.UserNamespace && hostUsers {
				return fmt.Errorf(nsErrorFmt, sysctl, ns)
			}
			return nil
		}
	}
	return fmt.Errorf("%q not allowlisted", sysctl)
}

// Admit checks that all sysctls given in pod's security context are valid
// according to the allowlist; when not, it returns the kubelet's reason and
// message for the rejection.
func (a *Allowlist) Admit(pod *v1.Pod) (ok bool, reason, message string) {
	if pod.Spec.SecurityContext == nil || len(pod.Spec.SecurityContext.Sysctls) == 0 {
		return true, "", ""
	}

	// The default for hostUsers is true, so a nil HostUsers means the pod
	// shares the host user namespace.
	hostUsers := pod.Spec.HostUsers == nil || *pod.Spec.HostUsers
	for _, s := range pod.Spec.SecurityContext.Sysctls {
		if err := a.w.validateSysctl(s.Name, pod.Spec.HostNetwork, pod.Spec.HostIPC, hostUsers); err != nil {
			return false, ForbiddenReason, fmt.Sprintf("forbidden sysctl: %v", err)
		}
	}
	return true, "", ""
}
