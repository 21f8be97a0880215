package predicate

import v1 "k8s.io/api/core/v1"

// bindAll is the host IP that stands for every address.
const bindAll = "0.0.0.0"

// portsFit reports whether none of the pod's host ports is in use by the
// other pods, with the scheduler's rule (HostPortInfo.CheckConflict): the
// same protocol and port conflict when the host IPs are equal or either is
// 0.0.0.0 (an empty IP and protocol mean 0.0.0.0 and TCP).
func portsFit(pod *v1.Pod, others []*v1.Pod) bool {
	inUse := map[hostPort]bool{}
	for _, p := range others {
		for _, cp := range hostPorts(p) {
			inUse[key(cp)] = true
		}
	}
	for _, cp := range hostPorts(pod) {
		want := key(cp)
		for used := range inUse {
			if used.port == want.port && used.protocol == want.protocol &&
				(used.ip == want.ip || used.ip == bindAll || want.ip == bindAll) {
				return false
			}
		}
	}
	return true
}

type hostPort struct {
	ip, protocol string
	port         int32
}

func key(cp v1.ContainerPort) hostPort {
	k := hostPort{ip: cp.HostIP, protocol: string(cp.Protocol), port: cp.HostPort}
	if k.ip == "" {
		k.ip = bindAll
	}
	if k.protocol == "" {
		k.protocol = string(v1.ProtocolTCP)
	}
	return k
}

// hostPorts lists the ports the pod holds on the host for its whole life, as
// the scheduler's GetHostPorts: its containers' and its sidecars'.
func hostPorts(pod *v1.Pod) []v1.ContainerPort {
	var out []v1.ContainerPort
	add := func(c *v1.Container) {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				out = append(out, p)
			}
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}
