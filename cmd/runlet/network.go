package main

import (
	"path/filepath"

	"github.com/runlet/runlet/internal/network/cni"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/sirupsen/logrus"
)

// netnsDir is where pods' network namespaces are pinned: iproute2's place,
// so that `ip netns` lists them.
const netnsDir = "/run/netns"

// newPodNetwork is the pod network of a local backend. A remote backend's
// pods live on another host, where runlet cannot make namespaces: they
// keep the backend's own network.
func newPodNetwork(o *options, host runtime.HostInfo, log *logrus.Entry) (*cni.Manager, error) {
	if host.Remote {
		log.Warn("remote backend: pods get its own network, not the cluster's (no CNI)")
		return nil, nil
	}
	m, err := cni.New(cni.Config{
		Mode: o.NetworkPlugin, ConfDir: o.CNIConfDir, BinDirs: o.CNIBinDirs,
		StateDir: filepath.Join(o.RootDir, "network"), NetNSDir: netnsDir,
		Node: o.NodeName, NonMasqueradeCIDR: o.NonMasqueradeCIDR, Log: log.WithField("component", "network"),
	})
	if err != nil {
		return nil, err
	}
	if o.PodCIDR != "" {
		m.SetPodCIDRs([]string{o.PodCIDR})
	}
	return m, nil
}
