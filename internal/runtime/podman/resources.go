package podman

// oomScoreAdj is the container's oom_score_adj. Lowering it below the
// service's own needs CAP_SYS_RESOURCE (the create fails without), so
// without that capability a Guaranteed container gets the service's value,
// the lowest it may have.
func (b *Backend) oomScoreAdj(adj *int) *int {
	if adj == nil {
		return nil
	}
	v := *adj
	if !b.limits.CapSysResource && v < b.limits.OOMScoreAdj {
		v = b.limits.OOMScoreAdj
	}
	return &v
}
