package node

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// ValidateLabels checks --node-labels as the kubelet's ValidateKubeletFlags
// does: keys are qualified names, values label values, and a key in the
// kubernetes.io or k8s.io namespaces must be one a kubelet may set on its own
// Node (NodeRestriction admission refuses the others).
func ValidateLabels(labels map[string]string) error {
	var unknown, invalid []string
	for k, v := range labels {
		if isKubernetesLabel(k) && !kubeletapis.IsKubeletLabel(k) {
			unknown = append(unknown, k)
		}
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", k, strings.Join(errs, ", ")))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			invalid = append(invalid, fmt.Sprintf("'%s' - %s", v, strings.Join(errs, ", ")))
		}
	}
	sort.Strings(unknown)
	sort.Strings(invalid)
	if len(unknown) > 0 {
		return fmt.Errorf("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: %v; "+
			"labels in the 'kubernetes.io' namespace must begin with an allowed prefix (%s) or be in the specifically allowed set (%s)",
			unknown, strings.Join(kubeletapis.KubeletLabelNamespaces(), ", "), strings.Join(kubeletapis.KubeletLabels(), ", "))
	}
	if len(invalid) > 0 {
		return fmt.Errorf("invalid node labels: %s", strings.Join(invalid, "; "))
	}
	return nil
}

// isKubernetesLabel is the kubelet's (cmd/kubelet/app/options).
func isKubernetesLabel(key string) bool {
	ns, _, found := strings.Cut(key, "/")
	if !found {
		return false
	}
	return ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") ||
		ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
}
