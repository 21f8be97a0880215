package podconfig

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateStaticPod is the cheap part of the API's pod validation: what would
// make the mirror pod fail to create or the backend trip over the spec. The
// full ValidatePodCreate lives in k8s.io/kubernetes, which runlet does not import.
func validateStaticPod(pod *v1.Pod) error {
	errs := apivalidation.ValidateObjectMeta(&pod.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&pod.Spec, field.NewPath("spec"))...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid pod: %w", errs.ToAggregate())
	}
	if what := apiObjectReference(pod); what != "" {
		// The mirror pod would be rejected by admission, and runlet could not
		// resolve the object without the apiserver anyway.
		return fmt.Errorf("static pods may not reference %s", what)
	}
	return nil
}

func validateSpec(s *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "at least one container is needed"))
	}
	switch s.RestartPolicy {
	case v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	default:
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), s.RestartPolicy,
			[]string{string(v1.RestartPolicyAlways), string(v1.RestartPolicyOnFailure), string(v1.RestartPolicyNever)}))
	}
	volumes, verrs := validateVolumes(s.Volumes, p.Child("volumes"))
	errs = append(errs, verrs...)
	names := sets.New[string]()
	errs = append(errs, validateContainers(s.InitContainers, p.Child("initContainers"), names, volumes)...)
	errs = append(errs, validateContainers(s.Containers, p.Child("containers"), names, volumes)...)
	errs = append(errs, validateResourcesAndSysctls(s, p)...)
	return errs
}

func validateVolumes(vols []v1.Volume, p *field.Path) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, v := range vols {
		fp := p.Index(i).Child("name")
		for _, msg := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, field.Invalid(fp, v.Name, msg))
		}
		if names.Has(v.Name) {
			errs = append(errs, field.Duplicate(fp, v.Name))
		}
		names.Insert(v.Name)
	}
	return names, errs
}

// validateContainers checks names (unique across init and app containers),
// images, ports and that every mount names a volume.
func validateContainers(cs []v1.Container, p *field.Path, names, volumes sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		c, cp := &cs[i], p.Index(i)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(cp.Child("name"), c.Name, msg))
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(cp.Child("image"), ""))
		}
		for j, port := range c.Ports {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(cp.Child("ports").Index(j).Child("containerPort"), port.ContainerPort, msg))
			}
		}
		for j, m := range c.VolumeMounts {
			if !volumes.Has(m.Name) {
				errs = append(errs, field.NotFound(cp.Child("volumeMounts").Index(j).Child("name"), m.Name))
			}
		}
	}
	return errs
}

// apiObjectReference names the first API object kind the pod needs, as the
// kubelet's podutil.HasAPIObjectReference does; "" if none.
func apiObjectReference(pod *v1.Pod) string {
	s := &pod.Spec
	switch {
	case s.ServiceAccountName != "":
		return "serviceaccounts"
	case len(s.ImagePullSecrets) > 0:
		return "secrets"
	case len(s.ResourceClaims) > 0:
		return "resourceclaims"
	}
	for _, cs := range [][]v1.Container{s.InitContainers, s.Containers} {
		if what := envReference(cs); what != "" {
			return what
		}
	}
	for i := range s.Volumes {
		if what := volumeReference(&s.Volumes[i]); what != "" {
			return what
		}
	}
	return ""
}

func envReference(cs []v1.Container) string {
	for i := range cs {
		for _, e := range cs[i].EnvFrom {
			if e.SecretRef != nil {
				return "secrets"
			}
			if e.ConfigMapRef != nil {
				return "configmaps"
			}
		}
		for _, e := range cs[i].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				return "secrets"
			}
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				return "configmaps"
			}
		}
	}
	return ""
}

func volumeReference(v *v1.Volume) string {
	switch {
	case v.ConfigMap != nil:
		return "configmaps (via configmap volumes)"
	case v.Secret != nil:
		return "secrets (via secret volumes)"
	case v.CSI != nil:
		return "csidrivers (via CSI volumes)"
	case v.Glusterfs != nil:
		return "endpoints (via glusterFS volumes)"
	case v.PersistentVolumeClaim != nil:
		return "persistentvolumeclaims"
	case v.Ephemeral != nil:
		return "persistentvolumeclaims (via ephemeral volumes)"
	case v.AzureFile != nil:
		return "secrets (via azureFile volumes)"
	case v.Projected != nil:
		return projectedReference(v.Projected)
	}
	return ""
}

func projectedReference(p *v1.ProjectedVolumeSource) string {
	for _, s := range p.Sources {
		switch {
		case s.ConfigMap != nil:
			return "configmaps (via projected volumes)"
		case s.Secret != nil:
			return "secrets (via projected volumes)"
		case s.ServiceAccountToken != nil:
			return "serviceaccounts (via projected volumes)"
		case s.ClusterTrustBundle != nil:
			return "clustertrustbundles"
		case s.PodCertificate != nil:
			return "podcertificates"
		}
	}
	return ""
}
