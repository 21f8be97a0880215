package kubelet

import (
	"context"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/mirror"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// inAPI reports a pod the API holds for the node; before the node's pods
// are known, nothing counts as an orphan's yet either.
func (k *Kubelet) inAPI(uid types.UID) bool {
	if !k.pods.Synced() {
		return true
	}
	pods, err := k.pods.Lister().List(labels.Everything())
	if err != nil {
		return true
	}
	for _, p := range pods {
		if p.UID == uid {
			return true
		}
	}
	return false
}

// apiPodOf finds the API's version of a pod (the same UID) in the node's
// pod informer.
func apiPodOf(pods apisource.Informer) status.APIPod {
	return func(pod *v1.Pod) (*v1.Pod, bool) {
		cur, err := pods.Lister().Pods(pod.Namespace).Get(pod.Name)
		return cur, err == nil && cur.UID == pod.UID
	}
}

// mirrorOf finds a static pod's mirror pod in the node's pod informer.
func mirrorOf(pods apisource.Informer) status.APIPod {
	return func(static *v1.Pod) (*v1.Pod, bool) { return mirror.Find(pods.Lister(), static) }
}

// GetPodByName finds a pod the api source holds, with the status manager's
// newest status: the pod as the kubelet API and the framework read it.
func (k *Kubelet) GetPodByName(namespace, name string) (*v1.Pod, bool) {
	pod, ok := k.source.Get(namespace, name)
	if !ok {
		return nil, false
	}
	return k.status.WithStatus(pod), true
}

// RunningPods are the pods the api source holds, with their newest
// statuses. Static pods are not listed: the framework would delete them as
// unknown to the API.
func (k *Kubelet) RunningPods(context.Context) ([]*v1.Pod, error) {
	pods := k.source.Pods()
	for _, pod := range pods {
		k.status.WithStatus(pod)
	}
	return pods, nil
}

// RunningContainers lists the containers that run now, from the PLEG's view.
func (k *Kubelet) RunningContainers() []string {
	var out []string
	for _, uid := range k.cache.UIDs() {
		for _, ctr := range k.cache.Get(uid).Containers {
			if ctr.State == runtime.ContainerRunning {
				out = append(out, ctr.ID)
			}
		}
	}
	return out
}

// RuntimeStatus is the newest backend view of a pod, for the kubelet API.
func (k *Kubelet) RuntimeStatus(uid types.UID) *runtime.PodStatus { return k.cache.Get(string(uid)) }

// runtimePods is the backend view of every pod, static ones included.
func (k *Kubelet) runtimePods() []*runtime.PodStatus {
	uids := k.cache.UIDs()
	out := make([]*runtime.PodStatus, 0, len(uids))
	for _, uid := range uids {
		if ps := k.cache.Get(uid); ps != nil {
			out = append(out, ps)
		}
	}
	return out
}
