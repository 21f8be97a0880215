package main

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

type kubeletConfig = kubeletv1beta1.KubeletConfiguration

// configField maps one KubeletConfiguration field to runlet's option, a
// flag unless the kubelet has none for it (shutdownGracePeriod): apply
// copies the file's value into the options (checked by kubeletconfig
// before), store copies the final option back for /configz.
type configField struct {
	name  string // dotted JSON path
	apply func(*options, *kubeletConfig)
	store func(*options, *kubeletConfig)
}

// configFields are the fields runlet honours, in the kubelet's order.
var configFields = []configField{
	{"staticPodPath", func(o *options, k *kubeletConfig) { o.PodManifestPath = k.StaticPodPath },
		func(o *options, k *kubeletConfig) { k.StaticPodPath = o.PodManifestPath }},
	{"staticPodURL", func(o *options, k *kubeletConfig) { o.ManifestURL = k.StaticPodURL },
		func(o *options, k *kubeletConfig) { k.StaticPodURL = o.ManifestURL }},
	{"staticPodURLHeader", func(o *options, k *kubeletConfig) { o.ManifestURLHeader = headerFlags(k.StaticPodURLHeader) },
		func(o *options, k *kubeletConfig) { k.StaticPodURLHeader = o.manifestHeader }},
	{"address", func(o *options, k *kubeletConfig) { o.Address = k.Address },
		func(o *options, k *kubeletConfig) { k.Address = o.Address }},
	{"port", func(o *options, k *kubeletConfig) { o.KubeletPort = k.Port },
		func(o *options, k *kubeletConfig) { k.Port = o.KubeletPort }},
	{"tlsCertFile", func(o *options, k *kubeletConfig) { o.TLSCertFile = k.TLSCertFile },
		func(o *options, k *kubeletConfig) { k.TLSCertFile = o.TLSCertFile }},
	{"tlsPrivateKeyFile", func(o *options, k *kubeletConfig) { o.TLSKeyFile = k.TLSPrivateKeyFile },
		func(o *options, k *kubeletConfig) { k.TLSPrivateKeyFile = o.TLSKeyFile }},
	{"rotateCertificates", func(o *options, k *kubeletConfig) { o.RotateCertificates = k.RotateCertificates },
		func(o *options, k *kubeletConfig) { k.RotateCertificates = o.RotateCertificates }},
	{"serverTLSBootstrap", func(o *options, k *kubeletConfig) { o.BootstrapServingCert = k.ServerTLSBootstrap },
		func(o *options, k *kubeletConfig) { k.ServerTLSBootstrap = o.BootstrapServingCert }},
	{"authentication.x509.clientCAFile", func(o *options, k *kubeletConfig) { o.ClientCAFile = k.Authentication.X509.ClientCAFile },
		func(o *options, k *kubeletConfig) { k.Authentication.X509.ClientCAFile = o.ClientCAFile }},
	{"authentication.webhook.enabled", func(o *options, k *kubeletConfig) {
		o.AuthWebhook = ptr.Deref(k.Authentication.Webhook.Enabled, o.AuthWebhook)
	},
		func(o *options, k *kubeletConfig) { k.Authentication.Webhook.Enabled = ptr.To(o.AuthWebhook) }},
	{"authorization.mode", func(o *options, k *kubeletConfig) { o.AuthorizationMode = string(k.Authorization.Mode) },
		func(o *options, k *kubeletConfig) {
			k.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationMode(o.AuthorizationMode)
		}},
	{"eventRecordQPS", func(o *options, k *kubeletConfig) { o.EventQPS = ptr.Deref(k.EventRecordQPS, o.EventQPS) },
		func(o *options, k *kubeletConfig) { k.EventRecordQPS = ptr.To(o.EventQPS) }},
	{"eventBurst", func(o *options, k *kubeletConfig) { o.EventBurst = k.EventBurst },
		func(o *options, k *kubeletConfig) { k.EventBurst = o.EventBurst }},
	{"clusterDomain", func(o *options, k *kubeletConfig) { o.ClusterDomain = k.ClusterDomain },
		func(o *options, k *kubeletConfig) { k.ClusterDomain = o.ClusterDomain }},
	{"clusterDNS", func(o *options, k *kubeletConfig) { o.ClusterDNS = parseIPs(k.ClusterDNS) },
		func(o *options, k *kubeletConfig) { k.ClusterDNS = ipStrings(o.ClusterDNS) }},
	{"imageGCHighThresholdPercent", func(o *options, k *kubeletConfig) {
		o.ImageGCHighThreshold = int(ptr.Deref(k.ImageGCHighThresholdPercent, 0))
	},
		func(o *options, k *kubeletConfig) {
			k.ImageGCHighThresholdPercent = ptr.To(int32(o.ImageGCHighThreshold))
		}},
	{"imageGCLowThresholdPercent", func(o *options, k *kubeletConfig) {
		o.ImageGCLowThreshold = int(ptr.Deref(k.ImageGCLowThresholdPercent, 0))
	},
		func(o *options, k *kubeletConfig) {
			k.ImageGCLowThresholdPercent = ptr.To(int32(o.ImageGCLowThreshold))
		}},
	{"maxPods", func(o *options, k *kubeletConfig) { o.MaxPods = int(k.MaxPods) },
		func(o *options, k *kubeletConfig) { k.MaxPods = int32(o.MaxPods) }},
	{"podCIDR", func(o *options, k *kubeletConfig) { o.PodCIDR = k.PodCIDR },
		func(o *options, k *kubeletConfig) { k.PodCIDR = o.PodCIDR }},
	{"podPidsLimit", func(o *options, k *kubeletConfig) { o.PodMaxPids = ptr.Deref(k.PodPidsLimit, o.PodMaxPids) },
		func(o *options, k *kubeletConfig) { k.PodPidsLimit = ptr.To(o.PodMaxPids) }},
	{"resolvConf", func(o *options, k *kubeletConfig) { o.ResolvConf = ptr.Deref(k.ResolverConfig, "") },
		func(o *options, k *kubeletConfig) { k.ResolverConfig = ptr.To(o.ResolvConf) }},
	{"kubeAPIQPS", func(o *options, k *kubeletConfig) {
		o.KubeAPIQPS = float32(ptr.Deref(k.KubeAPIQPS, int32(o.KubeAPIQPS)))
	},
		func(o *options, k *kubeletConfig) { k.KubeAPIQPS = ptr.To(int32(o.KubeAPIQPS)) }},
	{"kubeAPIBurst", func(o *options, k *kubeletConfig) { o.KubeAPIBurst = int(k.KubeAPIBurst) },
		func(o *options, k *kubeletConfig) { k.KubeAPIBurst = int32(o.KubeAPIBurst) }},
	{"evictionHard", func(o *options, k *kubeletConfig) { o.EvictionHard = maps.Clone(k.EvictionHard) },
		func(o *options, k *kubeletConfig) { k.EvictionHard = o.EvictionHard }},
	{"evictionPressureTransitionPeriod", func(o *options, k *kubeletConfig) {
		o.EvictionPressureTransitionPeriod = k.EvictionPressureTransitionPeriod.Duration
	},
		func(o *options, k *kubeletConfig) {
			k.EvictionPressureTransitionPeriod = metav1.Duration{Duration: o.EvictionPressureTransitionPeriod}
		}},
	// Applied by kubeletconfig.Load, to the file's evictionHard.
	{"mergeDefaultEvictionSettings", nil, nil},
	{"containerLogMaxSize", func(o *options, k *kubeletConfig) { o.logMaxSize = k.ContainerLogMaxSize },
		func(o *options, k *kubeletConfig) {
			k.ContainerLogMaxSize = resource.NewQuantity(o.ContainerLogMaxSize, resource.BinarySI).String()
		}},
	{"containerLogMaxFiles", func(o *options, k *kubeletConfig) { o.ContainerLogMaxFiles = int(ptr.Deref(k.ContainerLogMaxFiles, 0)) },
		func(o *options, k *kubeletConfig) { k.ContainerLogMaxFiles = ptr.To(int32(o.ContainerLogMaxFiles)) }},
	{"systemReserved", func(o *options, k *kubeletConfig) { o.SystemReserved = maps.Clone(k.SystemReserved) },
		func(o *options, k *kubeletConfig) { k.SystemReserved = o.SystemReserved }},
	{"kubeReserved", func(o *options, k *kubeletConfig) { o.KubeReserved = maps.Clone(k.KubeReserved) },
		func(o *options, k *kubeletConfig) { k.KubeReserved = o.KubeReserved }},
	{"allowedUnsafeSysctls", func(o *options, k *kubeletConfig) { o.AllowedUnsafeSysctls = slices.Clone(k.AllowedUnsafeSysctls) },
		func(o *options, k *kubeletConfig) { k.AllowedUnsafeSysctls = o.AllowedUnsafeSysctls }},
	{"seccompDefault", func(o *options, k *kubeletConfig) { o.SeccompDefault = ptr.Deref(k.SeccompDefault, false) },
		func(o *options, k *kubeletConfig) { k.SeccompDefault = ptr.To(o.SeccompDefault) }},
	{"shutdownGracePeriod", func(o *options, k *kubeletConfig) { o.ShutdownGracePeriod = k.ShutdownGracePeriod.Duration },
		func(o *options, k *kubeletConfig) {
			k.ShutdownGracePeriod = metav1.Duration{Duration: o.ShutdownGracePeriod}
		}},
	{"shutdownGracePeriodCriticalPods", func(o *options, k *kubeletConfig) {
		o.ShutdownGracePeriodCriticalPods = k.ShutdownGracePeriodCriticalPods.Duration
	},
		func(o *options, k *kubeletConfig) {
			k.ShutdownGracePeriodCriticalPods = metav1.Duration{Duration: o.ShutdownGracePeriodCriticalPods}
		}},
	{"shutdownGracePeriodByPodPriority", func(o *options, k *kubeletConfig) {
		o.ShutdownGracePeriodByPodPriority = slices.Clone(k.ShutdownGracePeriodByPodPriority)
	},
		func(o *options, k *kubeletConfig) {
			k.ShutdownGracePeriodByPodPriority = o.ShutdownGracePeriodByPodPriority
		}},
	{"registerWithTaints", func(o *options, k *kubeletConfig) { o.taints = taintFlag(k.RegisterWithTaints) },
		func(o *options, k *kubeletConfig) { k.RegisterWithTaints = o.RegisterWithTaints }},
}

// effectiveConfig is the configuration runlet runs with, flags and files
// together, as the kubelet serves it at /configz.
func effectiveConfig(o *options) *kubeletConfig {
	k := &kubeletConfig{}
	for _, f := range configFields {
		if f.store != nil {
			f.store(o, k)
		}
	}
	return k
}

// headerFlags is staticPodURLHeader as --manifest-url-header values.
func headerFlags(h map[string][]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			out = append(out, name+":"+v)
		}
	}
	return out
}

// taintFlag is registerWithTaints as --register-with-taints' text, which
// is parsed with the flags; an empty list is an untainted node.
func taintFlag(taints []v1.Taint) string {
	specs := make([]string, 0, len(taints))
	for _, t := range taints {
		spec := t.Key
		if t.Value != "" {
			spec += "=" + t.Value
		}
		specs = append(specs, fmt.Sprintf("%s:%s", spec, t.Effect))
	}
	return strings.Join(specs, ",")
}

func parseIPs(l []string) []net.IP {
	ips := make([]net.IP, 0, len(l))
	for _, s := range l {
		ips = append(ips, net.ParseIP(s))
	}
	return ips
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}
