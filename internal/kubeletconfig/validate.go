package kubeletconfig

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/eviction"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/sysctl"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// check is one field's rule; it runs only when the files set the field.
type check struct {
	field string
	ok    func() error
}

// validate refuses a value of a field runlet honours before anything
// starts, naming the file and the field, as runlet's flag checks name
// the flag. The same rules are applied to the flags afterwards.
func (c *Config) validate() error {
	for _, ck := range c.checks() {
		if !c.Has(ck.field) {
			continue
		}
		if err := ck.ok(); err != nil {
			return fmt.Errorf("%s: %s: %w", c.origin[strings.SplitN(ck.field, ".", 2)[0]], ck.field, err)
		}
	}
	return nil
}

func (c *Config) checks() []check {
	kc := c.KubeletConfiguration
	return []check{
		{"address", func() error { return isIP(kc.Address) }},
		{"port", func() error { return inRange(int64(kc.Port), 1, 65535) }},
		{"clusterDNS", func() error { return eachIP(kc.ClusterDNS) }},
		{"clusterDomain", func() error { return isDomain(kc.ClusterDomain) }},
		{"podCIDR", func() error { return isCIDR(kc.PodCIDR) }},
		{"maxPods", func() error { return inRange(int64(kc.MaxPods), 0, 1<<31-1) }},
		{"podPidsLimit", func() error { return pidsLimit(kc.PodPidsLimit) }},
		{"authorization.mode", func() error { return oneOf(string(kc.Authorization.Mode), "Webhook", "AlwaysAllow") }},
		{"evictionHard", func() error { _, err := eviction.ParseThresholdConfig(kc.EvictionHard, nil, nil, nil); return err }},
		{"evictionPressureTransitionPeriod", func() error { return inRange(int64(kc.EvictionPressureTransitionPeriod.Duration), 0, 1<<63-1) }},
		{"imageGCHighThresholdPercent", func() error { return percent(kc.ImageGCHighThresholdPercent) }},
		{"imageGCLowThresholdPercent", func() error { return percent(kc.ImageGCLowThresholdPercent) }},
		{"containerLogMaxSize", func() error { return positiveQuantity(kc.ContainerLogMaxSize) }},
		{"containerLogMaxFiles", func() error { return atLeast(kc.ContainerLogMaxFiles, 2) }},
		{"systemReserved", func() error { _, err := nodeinfo.ParseReservation(kc.SystemReserved); return err }},
		{"kubeReserved", func() error { _, err := nodeinfo.ParseReservation(kc.KubeReserved); return err }},
		{"allowedUnsafeSysctls", func() error { _, err := sysctl.NewAllowlist("", kc.AllowedUnsafeSysctls); return err }},
		{"kubeAPIQPS", func() error { return atLeast(kc.KubeAPIQPS, 0) }},
		{"kubeAPIBurst", func() error { return inRange(int64(kc.KubeAPIBurst), 0, 1<<31-1) }},
		{"eventRecordQPS", func() error { return atLeast(kc.EventRecordQPS, 0) }},
		{"eventBurst", func() error { return inRange(int64(kc.EventBurst), 0, 1<<31-1) }},
		{"registerWithTaints", func() error { return taints(kc.RegisterWithTaints) }},
		{"shutdownGracePeriod", func() error { return zeroOrSeconds(kc.ShutdownGracePeriod.Duration) }},
		{"shutdownGracePeriodCriticalPods", func() error {
			return criticalPods(kc.ShutdownGracePeriodCriticalPods.Duration, kc.ShutdownGracePeriod.Duration)
		}},
		{"shutdownGracePeriodByPodPriority", func() error { return byPodPriority(kc) }},
	}
}

// zeroOrSeconds is the kubelet's rule for a shutdown grace period: off, or
// at least a second.
func zeroOrSeconds(d time.Duration) error {
	if d < 0 || (d > 0 && d < time.Second) {
		return fmt.Errorf("%v must be either zero or otherwise >= 1 sec", d)
	}
	return nil
}

// criticalPods is a share of shutdownGracePeriod.
func criticalPods(d, whole time.Duration) error {
	if err := zeroOrSeconds(d); err != nil {
		return err
	}
	if d > whole {
		return fmt.Errorf("%v must be <= shutdownGracePeriod %v", d, whole)
	}
	return nil
}

// byPodPriority replaces the two durations, as the kubelet's rule.
func byPodPriority(kc *kubeletv1beta1.KubeletConfiguration) error {
	if len(kc.ShutdownGracePeriodByPodPriority) > 0 && (kc.ShutdownGracePeriod.Duration > 0 || kc.ShutdownGracePeriodCriticalPods.Duration > 0) {
		return fmt.Errorf("cannot be set with shutdownGracePeriod or shutdownGracePeriodCriticalPods")
	}
	for i, p := range kc.ShutdownGracePeriodByPodPriority {
		if p.ShutdownGracePeriodSeconds < 0 {
			return fmt.Errorf("[%d]: shutdownGracePeriodSeconds must not be negative, not %d", i, p.ShutdownGracePeriodSeconds)
		}
	}
	return nil
}

func isIP(s string) error {
	if net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not an IP address", s)
	}
	return nil
}

func eachIP(l []string) error {
	for i, s := range l {
		if err := isIP(s); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

func isDomain(s string) error {
	if s == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(s); len(errs) > 0 {
		return fmt.Errorf("%q is not a DNS domain: %s", s, strings.Join(errs, "; "))
	}
	return nil
}

func isCIDR(s string) error {
	if s == "" {
		return nil
	}
	if _, _, err := net.ParseCIDR(s); err != nil {
		return fmt.Errorf("%q is not a CIDR", s)
	}
	return nil
}

func inRange(v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("%d is out of range [%d, %d]", v, lo, hi)
	}
	return nil
}

func atLeast(p *int32, lo int32) error {
	if p != nil && *p < lo {
		return fmt.Errorf("must be at least %d, not %d", lo, *p)
	}
	return nil
}

func percent(p *int32) error {
	if p == nil {
		return nil
	}
	return inRange(int64(*p), 0, 100)
}

func pidsLimit(p *int64) error {
	if p != nil && (*p == 0 || *p < -1) {
		return fmt.Errorf("must be positive, or -1 for no limit, not %d", *p)
	}
	return nil
}

func oneOf(s string, allowed ...string) error {
	for _, a := range allowed {
		if s == a {
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", s, strings.Join(allowed, ", "))
}

func positiveQuantity(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Value() <= 0 {
		return fmt.Errorf("%q is not a positive quantity", s)
	}
	return nil
}

func taints(l []v1.Taint) error {
	for i, t := range l {
		if errs := validation.IsQualifiedName(t.Key); len(errs) > 0 {
			return fmt.Errorf("[%d]: key %q: %s", i, t.Key, strings.Join(errs, "; "))
		}
		if t.Value != "" {
			if errs := validation.IsValidLabelValue(t.Value); len(errs) > 0 {
				return fmt.Errorf("[%d]: value %q: %s", i, t.Value, strings.Join(errs, "; "))
			}
		}
		err := oneOf(string(t.Effect), string(v1.TaintEffectNoSchedule), string(v1.TaintEffectPreferNoSchedule), string(v1.TaintEffectNoExecute))
		if err != nil {
			return fmt.Errorf("[%d]: effect %w", i, err)
		}
	}
	return nil
}
