package checkpoint

import (
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// loadNode reads the Node as last seen, if the checkpoint has it.
func (s *Store) loadNode() {
	var n v1.Node
	sum, err := readEntry(filepath.Join(s.dir, nodeFile), &n)
	switch {
	case err == nil:
		s.node, s.nodeSum = &n, sum
	case !isNotExist(err):
		s.refuse(nodeFile, err)
	}
}

// Node is the Node as the API last showed it (its name, labels, taints and
// pod CIDRs), or nil: what runlet starts from while the API does not answer.
func (s *Store) Node() *v1.Node {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.node == nil {
		return nil
	}
	return s.node.DeepCopy()
}

// SetNode records what runlet needs of its Node to run its pods offline:
// the labels and taints pods are admitted against, the pod CIDRs their
// addresses come from.
func (s *Store) SetNode(n *v1.Node) {
	kept := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels},
		Spec:       v1.NodeSpec{PodCIDR: n.Spec.PodCIDR, PodCIDRs: n.Spec.PodCIDRs, Taints: n.Spec.Taints},
	}
	content, sum, err := encode(kept)
	if err != nil {
		s.log.WithError(err).Warn("node not checkpointed")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sum == s.nodeSum {
		return
	}
	s.node, s.nodeSum = kept.DeepCopy(), sum
	s.queue(nodeFile, content)
}
