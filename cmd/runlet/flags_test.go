package main

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestRegisterWithTaintsFlag(t *testing.T) {
	def := []v1.Taint{{Key: "virtual-kubelet.io/provider", Value: "runlet", Effect: v1.TaintEffectNoSchedule}}
	for _, tc := range []struct {
		args []string
		want []v1.Taint
	}{
		{nil, def},
		{[]string{"--register-with-taints="}, nil},
		{[]string{"--register-with-taints", ""}, nil},
		{[]string{"--register-with-taints=a=b:NoExecute,c:NoSchedule"}, []v1.Taint{
			{Key: "a", Value: "b", Effect: v1.TaintEffectNoExecute}, {Key: "c", Effect: v1.TaintEffectNoSchedule},
		}},
	} {
		o, err := parseFlags(append([]string{"--nodename", "n"}, tc.args...))
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if !reflect.DeepEqual(o.RegisterWithTaints, tc.want) {
			t.Errorf("%v: taints %v, want %v", tc.args, o.RegisterWithTaints, tc.want)
		}
	}
	_, err := parseFlags([]string{"--nodename", "n", "--register-with-taints=a=b"})
	if err == nil || !strings.HasPrefix(err.Error(), "--register-with-taints: invalid taint spec: a=b") {
		t.Errorf("bad taint: error %v", err)
	}
}

func TestNodeLabelsFlag(t *testing.T) {
	o, err := parseFlags([]string{"--nodename", "n", "--node-labels=zone=a, tier=web", "--node-labels", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"zone": "a", "tier": "web", "empty": ""}
	if !reflect.DeepEqual(o.NodeLabels, want) {
		t.Errorf("labels %v, want %v", o.NodeLabels, want)
	}
	o, err = parseFlags([]string{"--nodename", "n"})
	if err != nil || len(o.NodeLabels) != 0 {
		t.Errorf("no --node-labels: %v, %v", o.NodeLabels, err)
	}
	_, err = parseFlags([]string{"--nodename", "n", "--node-labels=kubernetes.io/role=x"})
	if err == nil || !strings.HasPrefix(err.Error(), "--node-labels: unknown 'kubernetes.io'") {
		t.Errorf("forbidden label: error %v", err)
	}
}

func TestNetworkFlags(t *testing.T) {
	o, err := parseFlags([]string{"--nodename", "n"})
	if err != nil {
		t.Fatal(err)
	}
	if o.NetworkPlugin != "auto" || o.CNIConfDir != "/etc/cni/net.d" || !reflect.DeepEqual(o.CNIBinDirs, []string{"/opt/cni/bin", "/usr/lib/cni"}) ||
		o.NonMasqueradeCIDR != "10.0.0.0/8" || o.PodCIDR != "" {
		t.Errorf("defaults: %+v", o.networkOptions)
	}
	o, err = parseFlags([]string{"--nodename", "n", "--network-plugin=kubenet", "--pod-cidr=10.244.7.0/24", "--cni-bin-dir=/a,/b"})
	if err != nil || o.PodCIDR != "10.244.7.0/24" || !reflect.DeepEqual(o.CNIBinDirs, []string{"/a", "/b"}) {
		t.Errorf("set: %+v, %v", o, err)
	}
	for _, tc := range []struct{ arg, want string }{
		{"--network-plugin=flannel", "--network-plugin must be auto, cni or kubenet"},
		{"--pod-cidr=10.244.7.0", "--pod-cidr \"10.244.7.0\" is not a CIDR"},
		{"--non-masquerade-cidr=everything", "--non-masquerade-cidr \"everything\" is not a CIDR"},
	} {
		if _, err := parseFlags([]string{"--nodename", "n", tc.arg}); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want %q", tc.arg, err, tc.want)
		}
	}
}

func TestRuntimeFlags(t *testing.T) {
	o, err := parseFlags([]string{"--nodename", "n"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Runtime != "podman" || o.ImageGCHighThreshold != 85 || o.ImageGCLowThreshold != 80 {
		t.Errorf("defaults: %+v", o.runtimeOptions)
	}
	if o, err = parseFlags([]string{"--nodename", "n", "--runtime=runc"}); err != nil || o.Runtime != "runc" {
		t.Errorf("--runtime=runc: %+v, %v", o, err)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--runtime=docker"}},
		{[]string{"--image-gc-high-threshold=101"}},
		{[]string{"--image-gc-low-threshold=90"}},
	} {
		_, err := parseFlags(append([]string{"--nodename", "n"}, tc.args...))
		flag := strings.SplitN(tc.args[0], "=", 2)[0]
		if err == nil || !strings.HasPrefix(err.Error(), flag) {
			t.Errorf("%v: error %v; want one naming %s", tc.args, err, flag)
		}
	}
}
