package podman

import (
	"errors"
	"strings"
	"testing"
)

func TestNameHolder(t *testing.T) {
	id := strings.Repeat("4cf42465", 8)
	err := errors.New(`podman POST /containers/create: creating container storage: the container name "ns_p_uid_main_0" is already in use by ` +
		id + `. You have to remove that container to be able to reuse that name: that name is already in use (HTTP 500)`)
	if got := nameHolder(err); got != id {
		t.Errorf("nameHolder = %q; want %q", got, id)
	}
	if got := nameHolder(errors.New("EOF")); got != "" {
		t.Errorf("nameHolder of another error = %q", got)
	}
}

func TestPodNameHeld(t *testing.T) {
	err := errors.New(`podman POST /pods/create: failed to make pod: adding pod to state: name "ns_p_uid" is in use: pod already exists (HTTP 409)`)
	if !podNameHeld(err) || podNameHeld(errors.New("EOF")) || podNameHeld(nil) {
		t.Error("podNameHeld misreads podman's answers")
	}
}
