package podmanservice

import (
	"os"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

func TestHardField(t *testing.T) {
	for line, want := range map[string]uint64{
		"Max processes             32768                32768                processes ": 32768,
		"Max open files            1024                 20000                files     ": 20000,
		"Max cpu time              unlimited            unlimited            seconds   ": unix.RLIM_INFINITY,
	} {
		if got := hardField(line); got != want {
			t.Errorf("hardField(%q) = %d; want %d", line, got, want)
		}
	}
}

func TestProcessLimitsOfSelf(t *testing.T) {
	l, err := ProcessLimits(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var r unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_NPROC, &r)
	if l.NProc != r.Max {
		t.Errorf("NProc = %d; getrlimit says %d", l.NProc, r.Max)
	}
	if own := OwnLimits(); own.NProc != l.NProc || own.NoFile != l.NoFile || own.CapSysResource != l.CapSysResource {
		t.Errorf("OwnLimits = %+v; /proc/self says %+v", own, l)
	}
}

func TestRLimitsClamp(t *testing.T) {
	if got := (Limits{NoFile: 20000, NProc: 32768, CapSysResource: true}).RLimits(); got != nil {
		t.Errorf("with CAP_SYS_RESOURCE: %v; want podman's defaults (nil)", got)
	}
	got := Limits{NoFile: unix.RLIM_INFINITY, NProc: 4096}.RLimits()
	want := []RLimit{{Type: "nofile", Soft: 1 << 20, Hard: 1 << 20}, {Type: "nproc", Soft: 4096, Hard: 4096}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RLimits = %v; want %v", got, want)
	}
}
