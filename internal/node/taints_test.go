package node

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestParseTaints(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []v1.Taint
	}{
		{"", nil},
		{DefaultTaints, []v1.Taint{{Key: "virtual-kubelet.io/provider", Value: "runlet", Effect: v1.TaintEffectNoSchedule}}},
		{"dedicated:NoExecute", []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoExecute}}},
		{"a=1:NoSchedule,a=2:PreferNoSchedule", []v1.Taint{
			{Key: "a", Value: "1", Effect: v1.TaintEffectNoSchedule},
			{Key: "a", Value: "2", Effect: v1.TaintEffectPreferNoSchedule},
		}},
	} {
		got, err := ParseTaints(tc.in)
		if err != nil {
			t.Errorf("ParseTaints(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseTaints(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseTaintsRejects(t *testing.T) {
	for in, wantErr := range map[string]string{
		"key":                         "invalid taint spec: key",
		"key=v":                       "invalid taint spec: key=v",
		"key=v:Sometimes":             "unsupported taint effect",
		"a=b=c:NoSchedule":            "invalid taint spec",
		"a:b:NoSchedule":              "invalid taint spec",
		"bad key:NoSchedule":          "invalid taint spec: bad key:NoSchedule",
		"k=bad value:NoSchedule":      "invalid taint spec: k=bad value:NoSchedule",
		"k:NoSchedule,k=x:NoSchedule": "duplicated taints",
		"k:NoSchedule-":               "a taint to remove",
		"k:NoSchedule,":               "invalid taint spec",
	} {
		_, err := ParseTaints(in)
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseTaints(%q) = %v, want an error with %q", in, err, wantErr)
		}
	}
}

func TestFillTaintsAndLabels(t *testing.T) {
	taints, err := ParseTaints("a=b:NoExecute")
	if err != nil {
		t.Fatal(err)
	}
	n := &v1.Node{}
	o := Options{Name: "n1", InternalIP: "192.0.2.9", MaxPods: 10, StoragePath: t.TempDir(),
		Taints: taints, Labels: map[string]string{"zone": "a", "type": "mine"}}
	if err := Fill(n, o); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(n.Spec.Taints, taints) {
		t.Errorf("taints = %v, want %v", n.Spec.Taints, taints)
	}
	for k, v := range map[string]string{"zone": "a", "type": "mine", "kubernetes.io/hostname": "n1", "kubernetes.io/os": "linux"} {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q (labels %v)", k, n.Labels[k], v, n.Labels)
		}
	}
	o.Taints = nil
	n = &v1.Node{}
	if err := Fill(n, o); err != nil {
		t.Fatal(err)
	}
	if len(n.Spec.Taints) != 0 {
		t.Errorf("no taints asked, node has %v", n.Spec.Taints)
	}
}
