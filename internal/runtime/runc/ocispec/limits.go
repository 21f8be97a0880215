package ocispec

import "github.com/opencontainers/runtime-spec/specs-go"

// podmanRlimit is what podman gives a rootful container for nofile and
// nproc (define.RLimitDefaultValue); the runc backend's containers get the
// same.
const podmanRlimit = 1 << 20

// rlimits are nofile and nproc at podman's figure, clamped to the hard
// limits runc has: without CAP_SYS_RESOURCE setting a higher hard limit
// fails the container's start ("setrlimit: operation not permitted"). A
// limit not known is left out: the container inherits runc's.
func rlimits(h Host) []specs.POSIXRlimit {
	var out []specs.POSIXRlimit
	for _, l := range []struct {
		typ  string
		hard uint64
	}{{"RLIMIT_NOFILE", h.NoFileHard}, {"RLIMIT_NPROC", h.NProcHard}} {
		v := uint64(podmanRlimit)
		if !h.CapSysResource {
			if l.hard == 0 {
				continue
			}
			v = min(v, l.hard)
		}
		out = append(out, specs.POSIXRlimit{Type: l.typ, Hard: v, Soft: v})
	}
	return out
}

// oomScoreAdj is the container's oom_score_adj. Lowering it below runc's
// own needs CAP_SYS_RESOURCE (the start fails without), so without it a
// Guaranteed container gets runc's value, the lowest it may have; the
// podman backend clamps the same way.
func oomScoreAdj(adj *int, h Host) *int {
	if adj == nil {
		return nil
	}
	v := *adj
	if !h.CapSysResource {
		v = max(v, h.OOMScoreAdj)
	}
	return &v
}
