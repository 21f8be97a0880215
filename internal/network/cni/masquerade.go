package cni

import (
	"fmt"
	"net"
	"os"
	"sync"

	"github.com/coreos/go-iptables/iptables"
	"github.com/sirupsen/logrus"
)

// masquerader keeps kubenet's one NAT rule: pod traffic that leaves the
// cluster (not for --non-masquerade-cidr, not for this host) takes the
// host's address, while pods of other nodes see the pod's own.
type masquerader struct {
	node, nonMasq string
	log           logrus.FieldLogger

	mu    sync.Mutex
	rules map[string][]string // pod CIDR -> its rule
}

func newMasquerader(node, nonMasq string, log logrus.FieldLogger) *masquerader {
	return &masquerader{node: node, nonMasq: nonMasq, log: log, rules: map[string][]string{}}
}

func (q *masquerader) rule(cidr string) []string {
	return []string{"-s", cidr, "!", "-d", q.nonMasq, "-m", "addrtype", "!", "--dst-type", "LOCAL",
		"-m", "comment", "--comment", "runlet " + q.node + ": masquerade pod traffic leaving the cluster", "-j", "MASQUERADE"}
}

// ensure makes the rules those of cidrs, and the host forward and filter
// bridged traffic as Services need (kube-proxy's rules must see traffic
// between two pods of one bridge).
func (q *masquerader) ensure(cidrs []string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.nonMasq == "" {
		return nil
	}
	want := map[string]bool{}
	for _, c := range cidrs {
		if ip, _, err := net.ParseCIDR(c); err == nil && ip.To4() != nil {
			want[c] = true
		}
	}
	if len(want) == len(q.rules) {
		same := true
		for c := range want {
			same = same && q.rules[c] != nil
		}
		if same {
			return nil
		}
	}
	ipt, err := iptables.NewWithProtocol(iptables.ProtocolIPv4)
	if err != nil {
		return fmt.Errorf("iptables: %w", err)
	}
	for c, r := range q.rules {
		if !want[c] {
			if err := ipt.DeleteIfExists("nat", "POSTROUTING", r...); err != nil {
				return fmt.Errorf("removing the masquerade rule of %s: %w", c, err)
			}
			delete(q.rules, c)
		}
	}
	for c := range want {
		r := q.rule(c)
		if err := ipt.AppendUnique("nat", "POSTROUTING", r...); err != nil {
			return fmt.Errorf("adding the masquerade rule of %s: %w", c, err)
		}
		q.rules[c] = r
	}
	for _, s := range []string{"/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/bridge/bridge-nf-call-iptables"} {
		if err := os.WriteFile(s, []byte("1"), 0o644); err != nil {
			q.log.WithError(err).Warnf("could not set %s to 1: Services may not reach pods of this node", s)
		}
	}
	return nil
}

// remove deletes the rules and, for kubenet, the node's bridge: what a node
// that leaves the host must not leave behind.
func (q *masquerader) remove(cidrs []string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.nonMasq == "" {
		return nil // ensure made no rule
	}
	ipt, err := iptables.NewWithProtocol(iptables.ProtocolIPv4)
	if err != nil {
		return fmt.Errorf("iptables: %w", err)
	}
	for _, c := range cidrs {
		if q.rules[c] == nil {
			q.rules[c] = q.rule(c)
		}
	}
	for c, r := range q.rules {
		if err := ipt.DeleteIfExists("nat", "POSTROUTING", r...); err != nil {
			return fmt.Errorf("removing the masquerade rule of %s: %w", c, err)
		}
		delete(q.rules, c)
	}
	return nil
}
