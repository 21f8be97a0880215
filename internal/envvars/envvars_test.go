package envvars

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// objects is a fixed set of API objects.
type objects struct {
	cms      map[string]*v1.ConfigMap
	secrets  map[string]*v1.Secret
	services []*v1.Service
}

func (o *objects) ConfigMap(ns, name string) (*v1.ConfigMap, error) {
	if cm, ok := o.cms[ns+"/"+name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (o *objects) Secret(ns, name string) (*v1.Secret, error) {
	if s, ok := o.secrets[ns+"/"+name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

func (o *objects) Services(ns string) ([]*v1.Service, error) {
	var out []*v1.Service
	for _, s := range o.services {
		if s.Namespace == ns {
			out = append(out, s)
		}
	}
	return out, nil
}

func service(ns, name, ip string, ports ...v1.ServicePort) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func fixture() *objects {
	return &objects{
		cms: map[string]*v1.ConfigMap{"ns/cfg": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"},
			Data: map[string]string{"MODE": "fast", "LEVEL": "3"}}},
		secrets: map[string]*v1.Secret{"ns/creds": {ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"},
			Data: map[string][]byte{"TOKEN": []byte("s3cr3t")}}},
		services: []*v1.Service{
			service("default", "kubernetes", "10.0.0.1", v1.ServicePort{Name: "https", Port: 443}),
			service("ns", "my-db", "10.0.0.9", v1.ServicePort{Port: 5432}, v1.ServicePort{Name: "metrics", Port: 9187, Protocol: v1.ProtocolUDP}),
			service("ns", "headless", v1.ClusterIPNone, v1.ServicePort{Port: 80}),
			service("other", "elsewhere", "10.0.0.7", v1.ServicePort{Port: 80}),
		},
	}
}

func testPod() Pod {
	return Pod{Pod: &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u-1", Labels: map[string]string{"app": "web"}},
		Spec:       v1.PodSpec{NodeName: "node-1", ServiceAccountName: "sa", Containers: []v1.Container{{Name: "c"}}},
	}, PodIPs: []string{"10.88.0.5"}, HostIPs: []string{"192.168.1.2"}}
}

func envMap(t *testing.T, env []v1.EnvVar) map[string]string {
	t.Helper()
	m := map[string]string{}
	for i, e := range env {
		if i > 0 && env[i-1].Name >= e.Name {
			t.Errorf("env not sorted by name at %s", e.Name)
		}
		m[e.Name] = e.Value
	}
	return m
}

func TestEnvSources(t *testing.T) {
	pod := testPod()
	c := &v1.Container{Name: "c",
		EnvFrom: []v1.EnvFromSource{
			{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
			{Prefix: "S_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}}},
		},
		Env: []v1.EnvVar{
			{Name: "MODE", Value: "slow"}, // env wins over envFrom, and later entries see it
			{Name: "URL", Value: "http://$(MY_DB_SERVICE_HOST):$(MY_DB_SERVICE_PORT)/$(MODE)?l=$(LEVEL)&x=$(NOPE)&$$(ESC)"},
			{Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "APP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
			{Name: "UID", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
			{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "HOST_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
			{Name: "LVL", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
				LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "LEVEL"}}},
			{Name: "TOKEN", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
				LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "TOKEN"}}},
		},
	}
	env, err := NewResolver(fixture()).Env(pod, c)
	if err != nil {
		t.Fatal(err)
	}
	got := envMap(t, env)
	want := map[string]string{
		"MODE": "slow", "LEVEL": "3", "S_TOKEN": "s3cr3t",
		"URL": "http://10.0.0.9:5432/slow?l=3&x=$(NOPE)&$(ESC)",
		"POD": "web", "APP": "web", "UID": "u-1", "NODE": "node-1", "POD_IP": "10.88.0.5", "HOST_IP": "192.168.1.2",
		"LVL": "3", "TOKEN": "s3cr3t",
		"MY_DB_SERVICE_HOST": "10.0.0.9", "MY_DB_SERVICE_PORT": "5432", "MY_DB_SERVICE_PORT_METRICS": "9187",
		"MY_DB_PORT": "tcp://10.0.0.9:5432", "MY_DB_PORT_5432_TCP_ADDR": "10.0.0.9", "MY_DB_PORT_9187_UDP": "udp://10.0.0.9:9187",
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q; want %q", k, got[k], v)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "HEADLESS_") || strings.HasPrefix(k, "ELSEWHERE_") {
			t.Errorf("%s: headless services and other namespaces give no variables", k)
		}
	}
}

func TestServiceLinksDisabled(t *testing.T) {
	pod := testPod()
	off := false
	pod.Spec.EnableServiceLinks = &off
	env, err := NewResolver(fixture()).Env(pod, &v1.Container{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	got := envMap(t, env)
	if got["KUBERNETES_SERVICE_HOST"] != "10.0.0.1" || got["MY_DB_SERVICE_HOST"] != "" {
		t.Errorf("env %v; want the API server's service alone", got)
	}
}

func TestMissingSources(t *testing.T) {
	yes := true
	cmRef := func(name string, opt *bool) v1.EnvVar {
		return v1.EnvVar{Name: "V", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: name}, Key: "MODE", Optional: opt}}}
	}
	cases := []struct {
		name    string
		c       v1.Container
		wantErr string // "" = no error, V absent
	}{
		{"missing configMap", v1.Container{Env: []v1.EnvVar{cmRef("absent", nil)}}, `configmap "absent" not found`},
		{"optional configMap", v1.Container{Env: []v1.EnvVar{cmRef("absent", &yes)}}, ""},
		{"missing key", v1.Container{Env: []v1.EnvVar{{Name: "V", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "NOKEY"}}}}}, "couldn't find key NOKEY in ConfigMap ns/cfg"},
		{"missing secret", v1.Container{Env: []v1.EnvVar{{Name: "V", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Key: "K"}}}}}, `secret "gone" not found`},
		{"missing envFrom configMap", v1.Container{EnvFrom: []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}}, `configmap "absent" not found`},
		{"optional envFrom secret", v1.Container{EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Optional: &yes}}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, err := NewResolver(fixture()).Env(testPod(), &tc.c)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v; want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v; want one naming %s", err, tc.wantErr)
			case err == nil:
				if _, set := envMap(t, env)["V"]; set {
					t.Errorf("V set from a missing optional source")
				}
			}
		})
	}
	if _, err := NewResolver(nil).Env(testPod(), &v1.Container{Env: []v1.EnvVar{cmRef("cfg", nil)}}); err == nil ||
		!strings.Contains(err.Error(), "no API server") {
		t.Errorf("without an API server: error %v; want one saying so", err)
	}
}

func TestEnvResourceFieldRef(t *testing.T) {
	q := resource.MustParse
	pod := testPod()
	pod.Spec.Containers = []v1.Container{{Name: "c"}, {Name: "side"}}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Limits:   v1.ResourceList{v1.ResourceCPU: q("1500m"), v1.ResourceMemory: q("128Mi")},
		Requests: v1.ResourceList{v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("64Mi")},
	}
	pod.Spec.Containers[1].Resources.Limits = v1.ResourceList{v1.ResourceMemory: q("1Gi")}
	cases := []struct {
		resource, divisor, container, want string
	}{
		{"limits.cpu", "", "", "2"}, // rounded up to whole cores
		{"limits.cpu", "1m", "", "1500"},
		{"requests.cpu", "", "", "1"},
		{"requests.cpu", "100m", "", "3"},
		{"limits.memory", "", "", "134217728"},
		{"limits.memory", "1Mi", "", "128"},
		{"requests.memory", "1Mi", "", "64"},
		{"limits.memory", "1Mi", "side", "1024"}, // another container's resources
	}
	r := NewResolver(nil)
	for _, tc := range cases {
		c := pod.Spec.Containers[0].DeepCopy()
		ref := &v1.ResourceFieldSelector{Resource: tc.resource, ContainerName: tc.container}
		if tc.divisor != "" {
			ref.Divisor = q(tc.divisor)
		}
		c.Env = []v1.EnvVar{{Name: "R", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: ref}}}
		env, err := r.Env(pod, c)
		if err != nil {
			t.Errorf("%s/%s: %v", tc.resource, tc.divisor, err)
			continue
		}
		if got := fmt.Sprint(env); got != fmt.Sprint([]v1.EnvVar{{Name: "R", Value: tc.want}}) {
			t.Errorf("%s/%s/%s: env = %v; want R=%s", tc.resource, tc.divisor, tc.container, got, tc.want)
		}
	}
	for _, bad := range []v1.ResourceFieldSelector{{Resource: "limits.gpu"}, {Resource: "limits.cpu", ContainerName: "nope"}} {
		c := pod.Spec.Containers[0].DeepCopy()
		c.Env = []v1.EnvVar{{Name: "R", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &bad}}}
		if _, err := r.Env(pod, c); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestExpandCommand(t *testing.T) {
	c := &v1.Container{Command: []string{"sh", "-c"}, Args: []string{"echo $(GREETING) $(UNSET) $$(LITERAL)"}}
	cmd, args := ExpandCommand(c, []v1.EnvVar{{Name: "GREETING", Value: "hi"}})
	if fmt.Sprint(cmd) != "[sh -c]" || fmt.Sprint(args) != "[echo hi $(UNSET) $(LITERAL)]" {
		t.Errorf("command %q args %q", cmd, args)
	}
	if cmd, args := ExpandCommand(&v1.Container{}, nil); cmd != nil || args != nil {
		t.Errorf("no command: got %q %q; want nil (the image's)", cmd, args)
	}
}

// TestResourceFieldRefDefaultsToAllocatable: a container without a limit
// reports the node's allocatable (or the pod-level limit), as on the
// kubelet; requests have no default.
func TestResourceFieldRefDefaultsToAllocatable(t *testing.T) {
	q := resource.MustParse
	alloc := v1.ResourceList{v1.ResourceCPU: q("2"), v1.ResourceMemory: q("3Gi"), v1.ResourceEphemeralStorage: q("10Gi")}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
	c := &pod.Spec.Containers[0]
	for _, tc := range []struct{ res, divisor, want string }{
		{"limits.cpu", "", "2"}, {"limits.cpu", "1m", "2000"}, {"limits.memory", "1Mi", "3072"},
		{"limits.ephemeral-storage", "1Gi", "10"}, {"requests.cpu", "", "0"}, {"limits.hugepages-2Mi", "", "0"},
	} {
		ref := &v1.ResourceFieldSelector{Resource: tc.res}
		if tc.divisor != "" {
			ref.Divisor = q(tc.divisor)
		}
		if got, err := ResourceFieldValue(pod, c, ref, alloc); err != nil || got != tc.want {
			t.Errorf("%s/%s = %q, %v; want %s", tc.res, tc.divisor, got, err, tc.want)
		}
	}
	pod.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceMemory: q("1Gi")}}
	if got, _ := ResourceFieldValue(pod, c, &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: q("1Mi")}, alloc); got != "1024" {
		t.Errorf("under a pod-level limit: %s; want 1024", got)
	}
	// The downward API volume names the container and passes none.
	if got, err := ResourceFieldValue(pod, nil, &v1.ResourceFieldSelector{Resource: "limits.cpu", ContainerName: "c"}, alloc); err != nil || got != "2" {
		t.Errorf("by container name: %q, %v", got, err)
	}
	if _, err := ResourceFieldValue(pod, nil, &v1.ResourceFieldSelector{Resource: "limits.cpu"}, alloc); err == nil {
		t.Error("no container at all was accepted")
	}
}
