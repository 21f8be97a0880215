package vknode

import (
	"fmt"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
)

// newPodController builds the pod controller. runlet builds containers'
// environments itself when it creates them, as the kubelet does
// (SkipDownwardAPIResolution): the framework would resolve them before
// handing the pod over, and a missing configMap would then leave the pod
// Pending with no status at all. So the configMap, secret and service
// informers the framework requires are never started, and the cluster's
// other objects cost the node no watch and no memory.
func newPodController(cfg Config, p node.PodLifecycleHandler, pods corev1informers.PodInformer) (*node.PodController, error) {
	unused := corev1informers.New(newCoreFactory(cfg.Client, 0), v1.NamespaceAll, nil)
	pcc := node.PodControllerConfig{
		PodClient:                 podClient{PodsGetter: cfg.Client.CoreV1(), pods: pods.Lister(), provider: p},
		EventRecorder:             warningsOnly{cfg.EventRecorder},
		Provider:                  p,
		PodInformer:               pods,
		SecretInformer:            unused.Secrets(),
		ConfigMapInformer:         unused.ConfigMaps(),
		ServiceInformer:           unused.Services(),
		SkipDownwardAPIResolution: true,
	}
	for _, o := range cfg.PodControllerOpts {
		if err := o(&pcc); err != nil {
			return nil, err
		}
	}
	pc, err := node.NewPodController(pcc)
	if err != nil {
		return nil, fmt.Errorf("pod controller: %w", err)
	}
	return pc, nil
}
