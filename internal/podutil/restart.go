/*
Copyright 2015 The Kubernetes Authors.

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

// Package podutil holds the kubelet's small rules about a pod's containers
// that both the runtime manager and the status generator apply: which init
// containers are sidecars, and whether an exited container runs again; and
// how the node's own kills (eviction, node shutdown) set a pod condition.
//
// Copied from k8s.io/kubernetes v1.37.2 pkg/api/v1/pod/util.go (that module
// cannot be imported as a library), with the feature gates at their 1.37
// defaults: ContainerRestartRules and RestartAllContainersOnContainerExits
// on.
package podutil

import (
	v1 "k8s.io/api/core/v1"
)

// IsRestartableInitContainer returns true if the container has ContainerRestartPolicyAlways.
// This function is not checking if the container passed to it is indeed an init container.
// It is just checking if the container restart policy has been set to always.
func IsRestartableInitContainer(initContainer *v1.Container) bool {
	if initContainer == nil || initContainer.RestartPolicy == nil {
		return false
	}
	return *initContainer.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// HasRestartableInitContainer reports a pod with at least one sidecar.
func HasRestartableInitContainer(spec *v1.PodSpec) bool {
	for i := range spec.InitContainers {
		if IsRestartableInitContainer(&spec.InitContainers[i]) {
			return true
		}
	}
	return false
}

// ContainerShouldRestart checks if a container should be restarted by its restart policy.
// First, the container-level restartPolicyRules are evaluated in order. An action is taken if any
// rules are matched. Second, the container-level restart policy is used. Lastly, if no container
// level policy are specified, pod-level restart policy is used.
func ContainerShouldRestart(container v1.Container, pod v1.PodSpec, exitCode int32) bool {
	if container.RestartPolicy != nil {
		rule, ok := FindMatchingContainerRestartRule(container, exitCode)
		if ok && (rule.Action == v1.ContainerRestartRuleActionRestart || rule.Action == v1.ContainerRestartRuleActionRestartAllContainers) {
			return true
		}

		// Check container-level restart policy if no rules matched.
		switch *container.RestartPolicy {
		case v1.ContainerRestartPolicyAlways:
			return true
		case v1.ContainerRestartPolicyOnFailure:
			return exitCode != 0
		case v1.ContainerRestartPolicyNever:
			return false
		default:
			// Do nothing, fallback to pod-level restart policy.
		}
	}

	switch pod.RestartPolicy {
	case v1.RestartPolicyAlways:
		return true
	case v1.RestartPolicyOnFailure:
		return exitCode != 0
	case v1.RestartPolicyNever:
		return false
	default:
		// Default policy is Always, so we return true here.
		return true
	}
}

// FindMatchingContainerRestartRule returns a rule and true if the exitCode matched
// one of the restart rules for the given container. Returns and empty rule and
// false if no rules matched.
func FindMatchingContainerRestartRule(container v1.Container, exitCode int32) (rule v1.ContainerRestartRule, found bool) {
	for _, rule := range container.RestartPolicyRules {
		if rule.ExitCodes != nil {
			exitCodeMatched := false
			for _, code := range rule.ExitCodes.Values {
				if code == exitCode {
					exitCodeMatched = true
				}
			}
			switch rule.ExitCodes.Operator {
			case v1.ContainerRestartRuleOnExitCodesOpIn:
				if exitCodeMatched {
					return rule, true
				}
			case v1.ContainerRestartRuleOnExitCodesOpNotIn:
				if !exitCodeMatched {
					return rule, true
				}
			default:
				// Do nothing, continue to the next rule.
			}
		}
	}
	return v1.ContainerRestartRule{}, false
}

// ExitedContainerRestarts reports whether a container that exited with
// exitCode runs again: by ContainerShouldRestart, except that a regular init
// container that exited 0 is done.
func ExitedContainerRestarts(pod *v1.Pod, c *v1.Container, exitCode int32) bool {
	if exitCode == 0 && !IsRestartableInitContainer(c) {
		for i := range pod.Spec.InitContainers {
			if pod.Spec.InitContainers[i].Name == c.Name {
				return false
			}
		}
	}
	return ContainerShouldRestart(*c, pod.Spec, exitCode)
}

// RestartsAllContainers reports that c exiting with exitCode restarts every
// container of its pod (a RestartAllContainers rule matches).
func RestartsAllContainers(c *v1.Container, exitCode int32) bool {
	rule, ok := FindMatchingContainerRestartRule(*c, exitCode)
	return ok && rule.Action == v1.ContainerRestartRuleActionRestartAllContainers
}

// AllContainersCouldRestart reports a pod with a RestartAllContainers rule
// on any of its containers.
func AllContainersCouldRestart(spec *v1.PodSpec) bool {
	for _, list := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			for _, rule := range list[i].RestartPolicyRules {
				if rule.Action == v1.ContainerRestartRuleActionRestartAllContainers {
					return true
				}
			}
		}
	}
	return false
}
