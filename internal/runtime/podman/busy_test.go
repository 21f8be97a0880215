package podman

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// podmanBusy is podman's answer when a container's storage is still held.
const podmanBusy = `{"cause":"device or resource busy","message":"removing container 0330dd root filesystem: 1 error occurred:\n\t* unlinkat /var/lib/containers/storage/overlay-containers/0330dd/userdata/shm: device or resource busy","response":500}`

// failing answers route with err the first n times, then with 200.
func (f *fakePodman) failing(route string, n int, status int, body string) {
	calls := 0
	f.handle(route, func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls <= n {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{}`))
	})
}

func TestRemoveRetriesBusyStorage(t *testing.T) {
	f := newFakePodman(t)
	f.failing("DELETE /pods/p1", 2, http.StatusInternalServerError, podmanBusy)
	f.failing("DELETE /containers/c1", 1, http.StatusInternalServerError, podmanBusy)
	b := f.backend()
	if err := b.RemoveSandbox(context.Background(), "p1"); err != nil {
		t.Fatalf("RemoveSandbox: %v", err)
	}
	if n := len(f.sent("DELETE /pods/p1")); n != 3 {
		t.Errorf("pod removal sent %d times; want 3 (two busy answers, then success)", n)
	}
	if err := b.RemoveContainer(context.Background(), "c1"); err != nil {
		t.Fatalf("RemoveContainer: %v", err)
	}
	if n := len(f.sent("DELETE /containers/c1")); n != 2 {
		t.Errorf("container removal sent %d times; want 2", n)
	}
}

func TestRemoveGivesUpOnOtherErrorsAndPersistentBusy(t *testing.T) {
	f := newFakePodman(t)
	f.failing("DELETE /pods/other", 1, http.StatusInternalServerError, `{"cause":"io error","message":"disk on fire","response":500}`)
	f.failing("DELETE /pods/stuck", busyRetries+1, http.StatusInternalServerError, podmanBusy)
	b := f.backend()
	err := b.RemoveSandbox(context.Background(), "other")
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("RemoveSandbox = %v; want podman's error", err)
	}
	if n := len(f.sent("DELETE /pods/other")); n != 1 {
		t.Errorf("a removal that failed for another reason was sent %d times; want 1", n)
	}
	err = b.RemoveSandbox(context.Background(), "stuck")
	if err == nil || !strings.Contains(err.Error(), "device or resource busy") {
		t.Errorf("RemoveSandbox = %v; want the busy error once the tries are spent", err)
	}
	if n := len(f.sent("DELETE /pods/stuck")); n != busyRetries {
		t.Errorf("a removal busy every time was sent %d times; want %d", n, busyRetries)
	}
}
