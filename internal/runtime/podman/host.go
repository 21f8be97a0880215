package podman

import (
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

// specRLimits are the r_limits every create spec carries: the same clamp a
// service runlet starts gets in its containers.conf (nil: podman's defaults).
func specRLimits(l podmanservice.Limits) []libpod.RLimit {
	var out []libpod.RLimit
	for _, r := range l.RLimits() {
		out = append(out, libpod.RLimit{Type: r.Type, Hard: r.Hard, Soft: r.Soft})
	}
	return out
}

// chooseOCIRuntime picks the OCI runtime for every container: the override,
// else what this host needs (see podmanservice.OCIRuntime). Which binaries a
// remote host has cannot be seen from here: its default is kept.
func chooseOCIRuntime(info libpod.Info, override string, local bool) string {
	if override != "" {
		return override
	}
	if !local {
		return info.Host.OCIRuntime.Name
	}
	return podmanservice.OCIRuntime(info.Host.CgroupVersion, info.Host.OCIRuntime.Name)
}
