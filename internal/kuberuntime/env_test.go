package kuberuntime

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestHostNetworkPodIP: status.podIP of a host-network pod is the node's IP
// (the pod's IPs are the node's), and its sandbox's own address otherwise.
func TestHostNetworkPodIP(t *testing.T) {
	for _, hostNetwork := range []bool{false, true} {
		e := newEnv(t, func(c *Config) { c.HostIPs = []string{"192.0.2.7"} })
		pod := newPod(v1.RestartPolicyAlways, "c")
		pod.Spec.HostNetwork = hostNetwork
		pod.Spec.Containers[0].Env = []v1.EnvVar{
			{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "HOST_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
		}
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		cfg, _ := e.f.Config(e.latest(pod, "c").ID)
		env := map[string]bool{}
		for _, kv := range cfg.Env {
			env[kv] = true
		}
		sb := e.status(pod).Sandbox()
		wantPodIP := "192.0.2.7"
		if !hostNetwork {
			if len(sb.IPs) == 0 {
				t.Fatal("the fake gave the sandbox no IP")
			}
			wantPodIP = sb.IPs[0]
		}
		if !env["POD_IP="+wantPodIP] || !env["HOST_IP=192.0.2.7"] {
			t.Errorf("hostNetwork=%v: env %v, want POD_IP=%s HOST_IP=192.0.2.7", hostNetwork, cfg.Env, wantPodIP)
		}
	}
}
