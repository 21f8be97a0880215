// Package admission decides whether the node takes a new pod, as the
// kubelet's admit handlers do when a pod is added (HandlePodAdditions): the
// sysctl allowlist, the resource fit against node allocatable (the
// scheduler's noderesources fit, which the kubelet runs again), the
// supplementalGroupsPolicy the runtime supports, and AppArmor. A rejected
// pod fails with the handler's reason and message.
package admission

import (
	"fmt"

	"github.com/runlet/runlet/internal/sysctl"
	v1 "k8s.io/api/core/v1"
)

// The kubelet's rejection reasons (pkg/kubelet/lifecycle).
const (
	ReasonSupplementalGroupsPolicy = "SupplementalGroupsPolicyNotSupported"
	ReasonAppArmor                 = "AppArmor"
)

// Config is what admission checks a pod against.
type Config struct {
	// Allocatable is the node's allocatable resources (capacity minus
	// reservations); "pods" is the pod capacity.
	Allocatable v1.ResourceList
	// Sysctls is the allowlist of sysctls pods may set.
	Sysctls *sysctl.Allowlist
	// AppArmor says whether the host enforces AppArmor profiles.
	AppArmor bool
	// SupplementalGroupsPolicy says whether the runtime honours the Strict
	// policy (node.status.features.supplementalGroupsPolicy).
	SupplementalGroupsPolicy bool
}

// Result is a decision; Reason and Message explain a rejection.
type Result struct {
	Admit           bool
	Reason, Message string
}

// Admitter admits pods.
type Admitter struct {
	cfg Config
}

// New returns an admitter for cfg.
func New(cfg Config) *Admitter { return &Admitter{cfg: cfg} }

// Admit decides on pod given the pods the node already runs, in the
// kubelet's order of handlers; the first refusal wins.
func (a *Admitter) Admit(pod *v1.Pod, others []*v1.Pod) Result {
	if a.cfg.Sysctls != nil {
		if ok, reason, msg := a.cfg.Sysctls.Admit(pod); !ok {
			return Result{Reason: reason, Message: msg}
		}
	}
	if r := a.supplementalGroupsPolicy(pod); !r.Admit {
		return r
	}
	if r := fit(pod, others, a.cfg.Allocatable); !r.Admit {
		return r
	}
	return a.appArmor(pod)
}

// supplementalGroupsPolicy refuses Strict where the runtime cannot keep the
// image's groups out (rejectPodAdmissionBasedOnSupplementalGroupsPolicy).
func (a *Admitter) supplementalGroupsPolicy(pod *v1.Pod) Result {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.SupplementalGroupsPolicy == nil || a.cfg.SupplementalGroupsPolicy {
		return Result{Admit: true}
	}
	if *sc.SupplementalGroupsPolicy == v1.SupplementalGroupsPolicyStrict {
		return Result{Reason: ReasonSupplementalGroupsPolicy,
			Message: fmt.Sprintf("SupplementalGroupsPolicy=%s is not supported in this node", v1.SupplementalGroupsPolicyStrict)}
	}
	return Result{Admit: true}
}

// appArmor refuses a pod that asks for an AppArmor profile on a host that
// does not enforce AppArmor (the kubelet's appArmorAdmitHandler).
func (a *Admitter) appArmor(pod *v1.Pod) Result {
	if a.cfg.AppArmor || pod.Status.Phase != v1.PodPending && pod.Status.Phase != "" || !appArmorRequired(pod) {
		return Result{Admit: true}
	}
	return Result{Reason: ReasonAppArmor, Message: "Cannot enforce AppArmor: AppArmor is not enabled on the host"}
}

// appArmorRequired is pkg/security/apparmor's isRequired: some profile
// other than Unconfined, in a securityContext or the beta annotations.
func appArmorRequired(pod *v1.Pod) bool {
	confined := func(p *v1.AppArmorProfile) bool { return p != nil && p.Type != v1.AppArmorProfileTypeUnconfined }
	if sc := pod.Spec.SecurityContext; sc != nil && confined(sc.AppArmorProfile) {
		return true
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if c.SecurityContext != nil && confined(c.SecurityContext.AppArmorProfile) {
				return true
			}
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.SecurityContext != nil && confined(c.SecurityContext.AppArmorProfile) {
			return true
		}
	}
	for key, value := range pod.Annotations {
		if len(key) > len(v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) &&
			key[:len(v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)] == v1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix {
			return value != v1.DeprecatedAppArmorBetaProfileNameUnconfined
		}
	}
	return false
}
