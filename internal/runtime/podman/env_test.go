package podman

import (
	"reflect"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
)

// A container's environment is what containerd's CRI gives: no TERM without
// a TTY, the default PATH only when the image sets none, the pod's values
// last; podman's container=podman never appears.
func TestContainerEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		imageEnv []string
		cfg      runtime.ContainerConfig
		want     map[string]string
	}{
		{"image without PATH", nil, runtime.ContainerConfig{Env: []string{"A=1"}},
			map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "A": "1"}},
		{"image PATH and a TTY", []string{"PATH=/bin", "LANG=C.UTF-8"}, runtime.ContainerConfig{TTY: true},
			map[string]string{"PATH": "/bin", "LANG": "C.UTF-8", "TERM": "xterm"}},
		{"image TERM wins over the TTY's, the pod's over both", []string{"TERM=vt100", "X=image"}, runtime.ContainerConfig{TTY: true, Env: []string{"X=pod", "TERM=dumb"}},
			map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM": "dumb", "X": "pod"}},
		{"names that are not shell identifiers pass", nil, runtime.ContainerConfig{Env: []string{"data-1=value-1", "EMPTY="}},
			map[string]string{"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "data-1": "value-1", "EMPTY": ""}},
	} {
		if got := containerEnv(tc.imageEnv, tc.cfg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v; want %v", tc.name, got, tc.want)
		}
	}
}
