// Package kubeletconfig reads the kubelet's configuration file
// (--config, a kubelet.config.k8s.io/v1beta1 KubeletConfiguration) and its
// drop-in directory (--config-dir) as the kubelet does, checks the values
// runlet honours, and serves the effective configuration at /configz.
//
// runlet does not apply the kubelet's defaults: a field the files leave
// out keeps runlet's flag default, so the loaded configuration remembers
// which fields the files set (Has), zero values included.
package kubeletconfig
