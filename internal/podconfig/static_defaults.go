package podconfig

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// setPodDefaults applies the API defaults (pkg/apis/core/v1/defaults.go)
// the rest of runlet relies on. Pods from the apiserver arrive defaulted;
// the kubelet's decoder defaults static pods the same way, and k8s.io/kubernetes
// is too heavy to import for it.
func setPodDefaults(pod *v1.Pod) {
	s := &pod.Spec
	if s.RestartPolicy == "" {
		s.RestartPolicy = v1.RestartPolicyAlways
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = v1.DNSClusterFirst
	}
	if s.TerminationGracePeriodSeconds == nil {
		g := int64(v1.DefaultTerminationGracePeriodSeconds)
		s.TerminationGracePeriodSeconds = &g
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &v1.PodSecurityContext{}
	}
	if s.SchedulerName == "" {
		s.SchedulerName = v1.DefaultSchedulerName
	}
	if s.EnableServiceLinks == nil {
		on := v1.DefaultEnableServiceLinks
		s.EnableServiceLinks = &on
	}
	for i := range s.InitContainers {
		setContainerDefaults(&s.InitContainers[i], s.HostNetwork)
	}
	for i := range s.Containers {
		setContainerDefaults(&s.Containers[i], s.HostNetwork)
	}
	for i := range s.Volumes {
		if s.Volumes[i].VolumeSource == (v1.VolumeSource{}) {
			s.Volumes[i].EmptyDir = &v1.EmptyDirVolumeSource{}
		}
	}
}

func setContainerDefaults(c *v1.Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = defaultPullPolicy(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	defaultRequests(c)
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = v1.ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for _, pr := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		setProbeDefaults(pr)
	}
}

// defaultPullPolicy is Always for ":latest" or untagged images, as the API does.
func defaultPullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	last := image[strings.LastIndex(image, "/")+1:]
	if !strings.Contains(last, ":") || strings.HasSuffix(last, ":latest") {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}

func setProbeDefaults(p *v1.Probe) {
	if p == nil {
		return
	}
	for _, f := range []struct {
		v   *int32
		def int32
	}{{&p.TimeoutSeconds, 1}, {&p.PeriodSeconds, 10}, {&p.SuccessThreshold, 1}, {&p.FailureThreshold, 3}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if h := p.HTTPGet; h != nil {
		if h.Path == "" {
			h.Path = "/"
		}
		if h.Scheme == "" {
			h.Scheme = v1.URISchemeHTTP
		}
	}
}
