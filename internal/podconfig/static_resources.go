package podconfig

import (
	"fmt"
	"regexp"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// defaultRequests sets a request for every limit without one, as the API
// defaults containers (SetDefaults_Container): QoS and admission count
// requests.
func defaultRequests(c *v1.Container) {
	for name, q := range c.Resources.Limits {
		if _, ok := c.Resources.Requests[name]; ok {
			continue
		}
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		c.Resources.Requests[name] = q.DeepCopy()
	}
}

// sysctlRegexp is the API's sysctl name (pkg/apis/core/validation's
// SysctlContainSlashFmt), at most 253 characters.
var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// validateResourcesAndSysctls is the part of the API's validation that
// keeps nonsense from cgroups and sysctls: no negative quantities, no
// request above its limit, well-formed and unique sysctl names.
func validateResourcesAndSysctls(s *v1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		cs []v1.Container
		p  *field.Path
	}{{s.InitContainers, p.Child("initContainers")}, {s.Containers, p.Child("containers")}} {
		for i := range list.cs {
			errs = append(errs, validateRequirements(&list.cs[i].Resources, list.p.Index(i).Child("resources"))...)
		}
	}
	if s.Resources != nil {
		errs = append(errs, validateRequirements(s.Resources, p.Child("resources"))...)
	}
	if s.SecurityContext != nil {
		seen := map[string]bool{}
		for i, sc := range s.SecurityContext.Sysctls {
			fp := p.Child("securityContext", "sysctls").Index(i).Child("name")
			switch {
			case len(sc.Name) > 253 || !sysctlRegexp.MatchString(sc.Name):
				errs = append(errs, field.Invalid(fp, sc.Name, fmt.Sprintf("must have at most 253 characters and match regex %s", sysctlRegexp)))
			case seen[sc.Name]:
				errs = append(errs, field.Duplicate(fp, sc.Name))
			}
			seen[sc.Name] = true
		}
	}
	return errs
}

func validateRequirements(r *v1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range r.Limits {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("limits").Key(string(name)), q.String(), "must be greater than or equal to 0"))
		}
	}
	for name, q := range r.Requests {
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), q.String(), "must be greater than or equal to 0"))
			continue
		}
		if lim, ok := r.Limits[name]; ok && q.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), q.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}
