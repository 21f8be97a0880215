package predicate

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node() *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/os": "linux", "disk": "ssd"}},
		Spec:       v1.NodeSpec{Taints: []v1.Taint{{Key: "virtual-kubelet.io/provider", Value: "runlet", Effect: v1.TaintEffectNoSchedule}}},
	}
}

func withPorts(name string, ports ...v1.ContainerPort) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Ports: ports}}}}
}

func tcp(ip string, port int32) v1.ContainerPort {
	return v1.ContainerPort{HostIP: ip, HostPort: port, ContainerPort: 80}
}

// TestHostPorts: the scheduler's conflict rule, and the kubelet's reason
// and message.
func TestHostPorts(t *testing.T) {
	others := []*v1.Pod{withPorts("a", tcp("", 8080)), withPorts("b", tcp("127.0.0.1", 9090)), withPorts("c", v1.ContainerPort{ContainerPort: 80})}
	cases := []struct {
		name string
		port v1.ContainerPort
		fits bool
	}{
		{"same port, any address", tcp("", 8080), false},
		{"same port on one address, the other binds all", tcp("10.0.0.1", 8080), false},
		{"all addresses, the other binds one", tcp("0.0.0.0", 9090), false},
		{"same address and port", tcp("127.0.0.1", 9090), false},
		{"another address", tcp("127.0.0.2", 9090), true},
		{"another protocol", v1.ContainerPort{HostPort: 8080, ContainerPort: 80, Protocol: v1.ProtocolUDP}, true},
		{"another port", tcp("", 8081), true},
		{"no host port", v1.ContainerPort{ContainerPort: 8080}, true},
	}
	for _, tc := range cases {
		r := Admit(withPorts("new", tc.port), node(), others)
		if r.Admit != tc.fits {
			t.Errorf("%s: admitted %v, want %v", tc.name, r.Admit, tc.fits)
		}
		if !tc.fits && (r.Reason != "NodePorts" || r.Message != "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports") {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
	always := v1.ContainerRestartPolicyAlways
	sidecar := withPorts("s")
	sidecar.Spec.InitContainers = []v1.Container{{Name: "side", RestartPolicy: &always, Ports: []v1.ContainerPort{tcp("", 7070)}}}
	if r := Admit(withPorts("new", tcp("", 7070)), node(), []*v1.Pod{sidecar}); r.Admit {
		t.Error("a sidecar's host port was taken as free")
	}
	initOnly := withPorts("i")
	initOnly.Spec.InitContainers = []v1.Container{{Name: "init", Ports: []v1.ContainerPort{tcp("", 7070)}}}
	if r := Admit(withPorts("new", tcp("", 7070)), node(), []*v1.Pod{initOnly}); !r.Admit {
		t.Error("a plain init container's host port counted as held")
	}
}

func TestNodeAndOS(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1.Pod)
		reason string
	}{
		{"plain", func(*v1.Pod) {}, ""},
		{"matching selector", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ssd"} }, ""},
		{"selector the node lacks", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "hdd"} }, "NodeAffinity"},
		{"required affinity the node lacks", func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpExists}}}},
			}}}
		}, "NodeAffinity"},
		{"os label of another OS", func(p *v1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": "windows"} }, "PodOSSelectorNodeLabelDoesNotMatch"},
		{"os field of another OS", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} }, "PodOSNotSupported"},
		{"os field linux", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Linux} }, ""},
	}
	for _, tc := range cases {
		p := withPorts("p")
		tc.mutate(p)
		r := Admit(p, node(), nil)
		if r.Admit != (tc.reason == "") || r.Reason != tc.reason {
			t.Errorf("%s: %+v, want reason %q", tc.name, r, tc.reason)
		}
	}
	if r := Admit(withPorts("p", tcp("", 1)), node(), nil); r.Message != "" {
		t.Errorf("admitted pod carries a message: %+v", r)
	}
}

// TestNoExecuteTaints: a NoExecute taint refuses pods that do not tolerate
// it, except static pods; NoSchedule taints are the scheduler's business.
func TestNoExecuteTaints(t *testing.T) {
	n := node()
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "drain", Effect: v1.TaintEffectNoExecute})
	if r := Admit(withPorts("p"), n, nil); r.Reason != "TaintToleration" ||
		r.Message != "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate" {
		t.Errorf("untolerated NoExecute taint: %+v", r)
	}
	tolerating := withPorts("p")
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: "drain", Operator: v1.TolerationOpExists}}
	if r := Admit(tolerating, n, nil); !r.Admit {
		t.Errorf("tolerating pod refused: %+v", r)
	}
	static := withPorts("s")
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	if r := Admit(static, n, nil); !r.Admit {
		t.Errorf("static pod refused: %+v", r)
	}
	if r := Admit(withPorts("p"), node(), nil); !r.Admit {
		t.Errorf("NoSchedule taint refused a pod: %+v", r)
	}
}
