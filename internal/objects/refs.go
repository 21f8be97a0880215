package objects

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// ConfigMapNames lists the configMaps a pod refers to: env, envFrom and
// volumes (plain and projected), of every container, as the kubelet's
// VisitPodConfigmapNames.
func ConfigMapNames(pod *v1.Pod) sets.Set[string] {
	out := sets.New[string]()
	for _, c := range containers(pod) {
		for _, from := range c.EnvFrom {
			if from.ConfigMapRef != nil {
				out.Insert(from.ConfigMapRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				out.Insert(e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.ConfigMap != nil:
			out.Insert(vol.ConfigMap.Name)
		case vol.Projected != nil:
			for _, s := range vol.Projected.Sources {
				if s.ConfigMap != nil {
					out.Insert(s.ConfigMap.Name)
				}
			}
		}
	}
	return out
}

// SecretNames lists the secrets a pod refers to: image pull secrets, env,
// envFrom and volumes (plain and projected), as the kubelet's
// VisitPodSecretNames for the volume types runlet mounts.
func SecretNames(pod *v1.Pod) sets.Set[string] {
	out := sets.New[string]()
	for _, s := range pod.Spec.ImagePullSecrets {
		out.Insert(s.Name)
	}
	for _, c := range containers(pod) {
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil {
				out.Insert(from.SecretRef.Name)
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out.Insert(e.ValueFrom.SecretKeyRef.Name)
			}
		}
	}
	for _, vol := range pod.Spec.Volumes {
		switch {
		case vol.Secret != nil:
			out.Insert(vol.Secret.SecretName)
		case vol.Projected != nil:
			for _, s := range vol.Projected.Sources {
				if s.Secret != nil {
					out.Insert(s.Secret.Name)
				}
			}
		}
	}
	return out
}

func containers(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers)+len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	for i := range pod.Spec.EphemeralContainers {
		out = append(out, (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	return out
}
