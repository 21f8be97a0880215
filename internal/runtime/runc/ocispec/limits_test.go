package ocispec

import (
	"reflect"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
)

func TestRlimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		host Host
		want []specs.POSIXRlimit
	}{
		{"clamped to the host's hard limits (this host: no CAP_SYS_RESOURCE)", Host{NoFileHard: 20000, NProcHard: 96362},
			[]specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 20000, Soft: 20000}, {Type: "RLIMIT_NPROC", Hard: 96362, Soft: 96362}}},
		{"podman's figure where the host allows more", Host{NoFileHard: 1 << 30, NProcHard: 1 << 21},
			[]specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1 << 20, Soft: 1 << 20}, {Type: "RLIMIT_NPROC", Hard: 1 << 20, Soft: 1 << 20}}},
		{"an unknown limit is inherited", Host{NProcHard: 500},
			[]specs.POSIXRlimit{{Type: "RLIMIT_NPROC", Hard: 500, Soft: 500}}},
		{"with CAP_SYS_RESOURCE runc may raise them", Host{CapSysResource: true, NoFileHard: 1024},
			[]specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1 << 20, Soft: 1 << 20}, {Type: "RLIMIT_NPROC", Hard: 1 << 20, Soft: 1 << 20}}},
	} {
		if got := rlimits(tc.host); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestOOMScoreAdj(t *testing.T) {
	for _, tc := range []struct {
		name string
		adj  *int
		host Host
		want *int
	}{
		{"unset stays unset", nil, Host{}, nil},
		{"not below runc's own without CAP_SYS_RESOURCE", ptr(-997), Host{OOMScoreAdj: -500}, ptr(-500)},
		{"raising needs nothing", ptr(1000), Host{}, ptr(1000)},
		{"with CAP_SYS_RESOURCE as asked", ptr(-997), Host{CapSysResource: true}, ptr(-997)},
	} {
		if got := oomScoreAdj(tc.adj, tc.host); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, deref(got), deref(tc.want))
		}
	}
	in := base()
	in.Container.Resources.OOMScoreAdj = ptr(999)
	if got := build(t, in).Process.OOMScoreAdj; got == nil || *got != 999 {
		t.Errorf("spec oom_score_adj %v; want 999", deref(got))
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
