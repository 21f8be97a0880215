package kubelet

import (
	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/userns"
	"github.com/sirupsen/logrus"
)

// newUserNamespaces allots the ranges of pods with hostUsers: false, from
// the kubelet user's subordinate IDs where the host configures them; with
// none (those IDs or the pod directories unreadable) such pods are refused.
func newUserNamespaces(cfg Config, log logrus.FieldLogger) kuberuntime.UserNamespaces {
	ids, err := userns.NodeHostIDs(cfg.MaxPods)
	if err != nil {
		log.WithError(err).Warn("the kubelet user's subordinate IDs: pods with hostUsers: false are refused")
		return nil
	}
	m, err := userns.New(poddir.New(cfg.RootDir), ids)
	if err != nil {
		log.WithError(err).Warn("user namespace ranges of pods on disk unreadable")
	}
	if m == nil {
		return nil
	}
	return m
}
