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

// Taint parsing of the kubelet's --register-with-taints, copied from
// k8s.io/kubernetes v1.37.2 pkg/util/taints/taints.go (parseTaint,
// validateTaintEffect, ParseTaints) and pkg/util/flag/flags.go
// (RegisterWithTaintsVar.Set): no importable module exports them. Adapted:
// one comma-separated string in, taints to add only ("key-" removals make no
// sense at registration and are an error here instead of being dropped),
// sets.Set instead of the deprecated sets.String.

package node

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The provider taint is virtual-kubelet's convention for a virtual node.
const (
	ProviderTaintKey   = "virtual-kubelet.io/provider"
	ProviderTaintValue = "runlet"
)

// DefaultTaints is the --register-with-taints default: it keeps ordinary
// workloads (and DaemonSets) off the virtual node.
const DefaultTaints = ProviderTaintKey + "=" + ProviderTaintValue + ":NoSchedule"

// ParseTaints parses the kubelet's --register-with-taints value: a
// comma-separated list of "<key>=<value>:<effect>" or "<key>:<effect>". An
// empty value means no taints.
func ParseTaints(s string) ([]v1.Taint, error) {
	if len(s) == 0 {
		return nil, nil
	}
	var taints []v1.Taint
	uniqueTaints := map[v1.TaintEffect]sets.Set[string]{}
	for _, taintSpec := range strings.Split(s, ",") {
		if strings.HasSuffix(taintSpec, "-") {
			return nil, fmt.Errorf("invalid taint spec: %v, a taint to remove has no meaning at registration", taintSpec)
		}
		newTaint, err := parseTaint(taintSpec)
		if err != nil {
			return nil, err
		}
		// validate that the taint has an effect, which is required to add the taint
		if len(newTaint.Effect) == 0 {
			return nil, fmt.Errorf("invalid taint spec: %v", taintSpec)
		}
		// validate if taint is unique by <key, effect>
		if uniqueTaints[newTaint.Effect].Has(newTaint.Key) {
			return nil, fmt.Errorf("duplicated taints with the same key and effect: %v", newTaint)
		}
		if uniqueTaints[newTaint.Effect] == nil {
			uniqueTaints[newTaint.Effect] = sets.New[string]()
		}
		uniqueTaints[newTaint.Effect].Insert(newTaint.Key)
		taints = append(taints, newTaint)
	}
	return taints, nil
}

// parseTaint parses a taint from a string, whose form must be either
// '<key>=<value>:<effect>', '<key>:<effect>', or '<key>'.
func parseTaint(st string) (v1.Taint, error) {
	var taint v1.Taint

	var key string
	var value string
	var effect v1.TaintEffect

	parts := strings.Split(st, ":")
	switch len(parts) {
	case 1:
		key = parts[0]
	case 2:
		effect = v1.TaintEffect(parts[1])
		if err := validateTaintEffect(effect); err != nil {
			return taint, err
		}

		partsKV := strings.Split(parts[0], "=")
		if len(partsKV) > 2 {
			return taint, fmt.Errorf("invalid taint spec: %v", st)
		}
		key = partsKV[0]
		if len(partsKV) == 2 {
			value = partsKV[1]
			if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
				return taint, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
			}
		}
	default:
		return taint, fmt.Errorf("invalid taint spec: %v", st)
	}

	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return taint, fmt.Errorf("invalid taint spec: %v, %s", st, strings.Join(errs, "; "))
	}

	taint.Key = key
	taint.Value = value
	taint.Effect = effect

	return taint, nil
}

func validateTaintEffect(effect v1.TaintEffect) error {
	if effect != v1.TaintEffectNoSchedule && effect != v1.TaintEffectPreferNoSchedule && effect != v1.TaintEffectNoExecute {
		return fmt.Errorf("invalid taint effect: %v, unsupported taint effect", effect)
	}

	return nil
}
