package kubelet

import (
	"github.com/runlet/runlet/internal/network/cni"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/vknode"
	v1 "k8s.io/api/core/v1"
)

// nodeObject is the Node object runlet registers, as the host and the
// config describe it.
func nodeObject(cfg NodeConfig, host runtime.HostInfo, network *cni.Manager) (*v1.Node, error) {
	n := vknode.BaseNode(cfg.NodeName)
	err := nodeinfo.Fill(n, nodeinfo.Options{
		Name: cfg.NodeName, InternalIP: cfg.NodeIP, KubeletPort: cfg.API.Port, MaxPods: cfg.MaxPods,
		StoragePath: StoragePath(cfg.RootDir), Version: cfg.KubeletVersion, Host: host,
		Reserved: cfg.Reserved,
		Taints:   cfg.Taints, Labels: cfg.Labels, PodCIDR: cfg.PodCIDR,
		NotReady: networkHealth(network)(),
	})
	return n, err
}

// networkHealth keeps the node NotReady while pods cannot join the
// network, and picks up changes of the CNI conf dir, as the kubelet's
// runtime status check does.
func networkHealth(m *cni.Manager) func() error {
	return func() error {
		if m == nil {
			return nil
		}
		m.Reload()
		return m.Status()
	}
}
