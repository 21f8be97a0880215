package node

import (
	"strings"
	"testing"
)

func TestValidateLabels(t *testing.T) {
	ok := map[string]string{
		"zone": "a", "example.com/tier": "", "node.kubernetes.io/instance-type": "small",
		"kubelet.kubernetes.io/x": "y", "topology.kubernetes.io/zone": "z",
	}
	for k, v := range ok {
		if err := ValidateLabels(map[string]string{k: v}); err != nil {
			t.Errorf("ValidateLabels(%s=%s): %v", k, v, err)
		}
	}
	for labels, wantErr := range map[[2]string]string{
		{"kubernetes.io/role", "agent"}:        "unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [kubernetes.io/role]",
		{"node-role.kubernetes.io/worker", ""}: "unknown 'kubernetes.io'",
		{"foo.k8s.io/x", "y"}:                  "unknown 'kubernetes.io'",
		{"bad key", "v"}:                       "invalid node labels: 'bad key'",
		{"k", "bad value"}:                     "invalid node labels: 'bad value'",
	} {
		err := ValidateLabels(map[string]string{labels[0]: labels[1]})
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ValidateLabels(%s=%s) = %v, want an error with %q", labels[0], labels[1], err, wantErr)
		}
	}
}
