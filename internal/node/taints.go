package node

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseTaints reads taints in the kubelet's --register-with-taints form,
// key[=value]:effect.
func ParseTaints(specs []string) ([]v1.Taint, error) {
	var out []v1.Taint
	seen := map[string]bool{}
	for _, s := range specs {
		t, err := parseTaint(s)
		if err != nil {
			return nil, err
		}
		id := t.Key + ":" + string(t.Effect)
		if seen[id] {
			return nil, fmt.Errorf("taint %q given twice", id)
		}
		seen[id] = true
		out = append(out, t)
	}
	return out, nil
}

func parseTaint(s string) (v1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	if !ok {
		return v1.Taint{}, fmt.Errorf("taint %q: want key[=value]:effect", s)
	}
	key, value, _ := strings.Cut(kv, "=")
	t := v1.Taint{Key: key, Value: value, Effect: v1.TaintEffect(effect)}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("taint %q: key: %s", s, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return t, fmt.Errorf("taint %q: value: %s", s, strings.Join(errs, "; "))
	}
	switch t.Effect {
	case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
	default:
		return t, fmt.Errorf("taint %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	return t, nil
}
