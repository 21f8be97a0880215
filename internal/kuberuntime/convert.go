package kuberuntime

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// sandboxConfig maps the pod-level parts of a pod to the backend (its host
// name and resolver: sandboxNetwork).
func sandboxConfig(pod *v1.Pod) runtime.SandboxConfig {
	cfg := runtime.SandboxConfig{
		PodUID:      string(pod.UID),
		Namespace:   pod.Namespace,
		Name:        pod.Name,
		Labels:      podLabels(pod),
		HostNetwork: pod.Spec.HostNetwork,
	}
	for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			cfg.Ports = append(cfg.Ports, runtime.PortMapping{
				HostIP: p.HostIP, HostPort: p.HostPort, ContainerPort: p.ContainerPort,
				Protocol: strings.ToLower(string(orDefault(p.Protocol, v1.ProtocolTCP))),
			})
		}
	}
	return cfg
}

func orDefault(p, d v1.Protocol) v1.Protocol {
	if p == "" {
		return d
	}
	return p
}

func podLabels(pod *v1.Pod) map[string]string {
	return runtime.PodLabels(string(pod.UID), pod.Namespace, pod.Name)
}

// containerConfig maps one container of the pod to the backend, with the
// environment built for it; $(VAR) in command and args expand from it.
func containerConfig(pod *v1.Pod, c *v1.Container, env []v1.EnvVar, attempt int, init bool) runtime.ContainerConfig {
	labels := runtime.ContainerLabels(podLabels(pod), c.Name, attempt)
	labels[runtime.LabelSpecHash] = HashContainer(c)
	if init {
		labels[runtime.LabelInit] = "true"
	}
	command, args := envvars.ExpandCommand(c, env)
	cfg := runtime.ContainerConfig{
		Name:        c.Name,
		Attempt:     attempt,
		Image:       c.Image,
		Command:     command,
		Args:        args,
		Env:         envStrings(env),
		WorkingDir:  c.WorkingDir,
		Stdin:       c.Stdin,
		TTY:         c.TTY,
		Labels:      labels,
		StopTimeout: gracePeriod(pod, nil),
	}
	// Security and Resources: prepareContainer (security.go, resources.go).
	return cfg
}

func envStrings(env []v1.EnvVar) []string {
	out := make([]string, 0, len(env))
	for _, e := range env {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}

// gracePeriod is how long containers get between SIGTERM and SIGKILL.
func gracePeriod(pod *v1.Pod, override *int64) time.Duration {
	g := int64(v1.DefaultTerminationGracePeriodSeconds)
	switch {
	case override != nil:
		g = *override
	case pod.DeletionGracePeriodSeconds != nil:
		g = *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		g = *pod.Spec.TerminationGracePeriodSeconds
	}
	if g < 0 {
		g = 0
	}
	return time.Duration(g) * time.Second
}

// HashContainer is a stable hash of a container's spec; a change means the
// running container no longer matches what the pod asks for. Env is left
// out (a pod's env cannot change, and containers created by earlier runlets
// were hashed without it: a new hash would restart them). Resources are left
// out as the kubelet does.
func HashContainer(c *v1.Container) string {
	cc := c.DeepCopy()
	cc.Env, cc.Resources = nil, v1.ResourceRequirements{}
	b, _ := json.Marshal(cc)
	h := fnv.New32a()
	_, _ = h.Write(b)
	return strconv.FormatUint(uint64(h.Sum32()), 16)
}
