// Package cni is the pod network: runlet makes each pod's network
// namespace and runs the CNI plugins on it (libcni), as a CRI runtime does,
// so that every backend joins the same namespace by path.
//
// Which network a pod joins is the plugin mode's choice:
//   - cni: the first network configuration in --cni-conf-dir, the cluster
//     network the host's CNI plugin (flannel, calico, cilium) runs;
//   - kubenet: runlet's own configuration, written once the node's podCIDR
//     is known: a bridge per node with host-local IPAM over the podCIDR,
//     portmap for hostPort, and masquerading of traffic that leaves the
//     cluster, as the kubelet's kubenet did;
//   - auto (the default): cni when the conf dir holds a configuration,
//     kubenet otherwise. podman's own default network ("podman") is the
//     backend's bridge, not a cluster network, and is passed over.
//
// Every attachment is recorded under the state directory before ADD and
// forgotten after DEL, so that a sandbox that went while runlet was down
// still has its DEL run and its IPAM lease released (GC).
package cni
