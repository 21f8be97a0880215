package kubelet

import (
	"net"

	"github.com/runlet/runlet/internal/network/dns"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// newDNSConfigurer is the kubelet's pod DNS configurer from the flags, with
// its check of the host's resolv.conf against the resolver's limits.
func newDNSConfigurer(o Config, rec record.EventRecorder, nodeIP string, log *logrus.Entry) *dns.Configurer {
	nodeRef := &v1.ObjectReference{Kind: "Node", Name: o.NodeName, UID: types.UID(o.NodeName)}
	var nodeIPs []net.IP
	if ip := net.ParseIP(nodeIP); ip != nil {
		nodeIPs = append(nodeIPs, ip)
	}
	c := dns.NewConfigurer(rec, log.WithField("component", "dns"), nodeRef, nodeIPs, o.ClusterDNS, o.ClusterDomain, o.ResolvConf)
	if o.ResolvConf != "" {
		c.CheckLimitsForResolvConf()
	}
	if len(o.ClusterDNS) == 0 {
		log.Warn("no --cluster-dns: pods with dnsPolicy ClusterFirst fall back to Default (the node's resolver), with a MissingClusterDNS event")
	}
	return c
}
