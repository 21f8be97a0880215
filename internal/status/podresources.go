package status

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// setPodResources reports the pod's own resources, as the kubelet does for
// every pod since pod-level resize (InPlacePodLevelResourcesVerticalScaling):
// allocatedResources are the pod's allocated requests; resources are, for
// a running pod, those its cgroup holds, else the pod's allocated requests
// and limits.
func (in Input) setPodResources(st *v1.PodStatus) {
	pod := in.Pod
	st.AllocatedResources = resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	if st.Phase == v1.PodRunning && in.PodInForce != nil {
		st.Resources = in.PodInForce()
		return
	}
	st.Resources = &v1.ResourceRequirements{}
	if pod.Spec.Resources != nil {
		st.Resources = pod.Spec.Resources.DeepCopy()
	}
	st.Resources.Requests = st.AllocatedResources.DeepCopy()
	st.Resources.Limits = resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
}
