package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/runlet/runlet/internal/network/cni"
	"github.com/spf13/pflag"
)

// networkOptions are the pod network's flags, the kubelet's names where it
// had them (--network-plugin, --cni-conf-dir, --cni-bin-dir, --pod-cidr,
// --non-masquerade-cidr).
type networkOptions struct {
	NetworkPlugin     string
	CNIConfDir        string
	CNIBinDirs        []string
	PodCIDR           string
	NonMasqueradeCIDR string
}

func addNetworkFlags(fs *pflag.FlagSet, o *networkOptions) {
	fs.StringVar(&o.NetworkPlugin, "network-plugin", cni.ModeAuto, "pod network: cni (the first config in --cni-conf-dir: the host's cluster network), kubenet (runlet's own bridge over the node's podCIDR), auto (cni when --cni-conf-dir holds a config other than podman's default, else kubenet)")
	fs.StringVar(&o.CNIConfDir, "cni-conf-dir", "/etc/cni/net.d", "directory of CNI network configurations")
	fs.StringSliceVar(&o.CNIBinDirs, "cni-bin-dir", []string{"/opt/cni/bin", "/usr/lib/cni"}, "directories searched for CNI plugin binaries, comma-separated, in order")
	fs.StringVar(&o.PodCIDR, "pod-cidr", "", "the node's pod range, for clusters that do not allocate node CIDRs; registered as the node's spec.podCIDR, and the node's own wins when it has one")
	fs.StringVar(&o.NonMasqueradeCIDR, "non-masquerade-cidr", "10.0.0.0/8", "kubenet: pod traffic to addresses outside this range takes the host's address")
}

func (o *networkOptions) validateNetwork() error {
	switch o.NetworkPlugin {
	case cni.ModeAuto, cni.ModeCNI, cni.ModeKubenet:
	default:
		return fmt.Errorf("--network-plugin must be auto, cni or kubenet, not %q", o.NetworkPlugin)
	}
	if len(o.CNIBinDirs) == 0 {
		return fmt.Errorf("--cni-bin-dir must name at least one directory")
	}
	for _, c := range []struct{ flag, v string }{{"--pod-cidr", o.PodCIDR}, {"--non-masquerade-cidr", o.NonMasqueradeCIDR}} {
		if c.v == "" {
			continue
		}
		if _, _, err := net.ParseCIDR(c.v); err != nil {
			return fmt.Errorf("%s %q is not a CIDR", c.flag, c.v)
		}
	}
	if o.PodCIDR != "" && strings.Contains(o.PodCIDR, ",") {
		return fmt.Errorf("--pod-cidr takes one CIDR, not %q", o.PodCIDR)
	}
	return nil
}
