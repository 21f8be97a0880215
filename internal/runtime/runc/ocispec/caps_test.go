package ocispec

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

func TestCapabilities(t *testing.T) {
	lacksSysResource := slices.DeleteFunc(slices.Clone(allCaps), func(c string) bool { return c == "CAP_SYS_RESOURCE" })
	for _, tc := range []struct {
		name string
		sec  runtime.SecurityConfig
		host []string
		want []string
	}{
		{"podman's defaults", runtime.SecurityConfig{}, nil, defaultCaps},
		{"add and drop", runtime.SecurityConfig{CapAdd: []string{"CAP_NET_ADMIN"}, CapDrop: []string{"CAP_CHOWN", "CAP_KILL"}}, nil,
			[]string{"CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID",
				"CAP_SETPCAP", "CAP_SETUID", "CAP_SYS_CHROOT", "CAP_NET_ADMIN"}},
		{"drop ALL, add one", runtime.SecurityConfig{CapDrop: []string{"ALL"}, CapAdd: []string{"CAP_NET_BIND_SERVICE"}}, nil,
			[]string{"CAP_NET_BIND_SERVICE"}},
		{"drop ALL", runtime.SecurityConfig{CapDrop: []string{"ALL"}}, nil, []string{}},
		{"drop wins over add", runtime.SecurityConfig{CapAdd: []string{"CAP_SYS_ADMIN"}, CapDrop: []string{"CAP_SYS_ADMIN"}}, nil, defaultCaps},
		{"add ALL, drop one", runtime.SecurityConfig{CapAdd: []string{"ALL"}, CapDrop: []string{"CAP_SYS_ADMIN"}}, nil,
			slices.DeleteFunc(slices.Clone(allCaps), func(c string) bool { return c == "CAP_SYS_ADMIN" })},
		{"add ALL takes what the host has", runtime.SecurityConfig{CapAdd: []string{"ALL"}}, lacksSysResource, lacksSysResource},
		{"privileged has everything, whatever is dropped", runtime.SecurityConfig{Privileged: true, CapDrop: []string{"CAP_CHOWN"}}, nil, allCaps},
		{"privileged on a host without CAP_SYS_RESOURCE", runtime.SecurityConfig{Privileged: true}, lacksSysResource, lacksSysResource},
	} {
		c, err := capabilities(tc.sec, tc.host)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(c.Bounding, tc.want) || !reflect.DeepEqual(c.Effective, tc.want) || !reflect.DeepEqual(c.Permitted, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %v in bounding, effective, permitted", tc.name, c, tc.want)
		}
		if len(c.Inheritable) > 0 || len(c.Ambient) > 0 {
			t.Errorf("%s: inheritable %v, ambient %v; want none", tc.name, c.Inheritable, c.Ambient)
		}
	}
	_, err := capabilities(runtime.SecurityConfig{CapAdd: []string{"CAP_SYS_RESOURCE"}}, lacksSysResource)
	if err == nil || !strings.Contains(err.Error(), "CAP_SYS_RESOURCE") {
		t.Errorf("adding a capability the host lacks: %v; want an error naming it", err)
	}
}

// TestCapabilitiesInSpec: the capabilities are never left to runc (which
// would keep its own), even when there are none.
func TestCapabilitiesInSpec(t *testing.T) {
	in := base()
	in.Container.Security.CapDrop = []string{"ALL"}
	c := build(t, in).Process.Capabilities
	if c == nil || c.Bounding == nil || len(c.Bounding) != 0 {
		t.Errorf("drop ALL: %+v; want empty, not absent", c)
	}
}

// TestCapNames: CapBnd's bits name the capabilities of allCaps.
func TestCapNames(t *testing.T) {
	if got := capNames(0x800405fb); !sameSet(got, defaultCaps) {
		t.Errorf("podman's default mask: %v; want %v", got, defaultCaps)
	}
	if got := capNames(0x1fffeffffff); len(got) != len(allCaps)-1 || slices.Contains(got, "CAP_SYS_RESOURCE") {
		t.Errorf("this host's bounding set: %v; want all but CAP_SYS_RESOURCE", got)
	}
	if allCaps[40] != "CAP_CHECKPOINT_RESTORE" || allCaps[24] != "CAP_SYS_RESOURCE" || allCaps[31] != "CAP_SETFCAP" {
		t.Error("allCaps is not in bit order")
	}
}

func sameSet(a, b []string) bool {
	return reflect.DeepEqual(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestCapabilityUnknown: a name no kernel knows is refused, as the podman
// backend's podman refuses it.
func TestCapabilityUnknown(t *testing.T) {
	if _, err := capabilities(runtime.SecurityConfig{CapAdd: []string{"CAP_FLY"}}, nil); err == nil || !strings.Contains(err.Error(), "unknown capability CAP_FLY") {
		t.Errorf("CAP_FLY: %v; want unknown", err)
	}
	if _, err := capabilities(runtime.SecurityConfig{CapAdd: []string{"CAP_FLY"}, CapDrop: []string{"CAP_FLY"}}, nil); err != nil {
		t.Errorf("an unknown capability added and dropped: %v", err)
	}
}
