package nodeshutdown

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/sirupsen/logrus"
)

// serve runs the trigger's socket under a new root dir until the test ends.
func serve(t *testing.T, m *Manager) string {
	t.Helper()
	root := t.TempDir()
	l, err := Listen(filepath.Join(root, SocketName))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); Serve(ctx, l, m, logrus.NewEntry(logrus.New())) }()
	t.Cleanup(func() { cancel(); <-done })
	return root
}

// A request returns only once the node's pods have stopped.
func TestRequestWaitsForThePodsToStop(t *testing.T) {
	node := newFakeNode(pod("web", nil, nil))
	m, _, _ := newManager(t, node, 20*time.Second, 10*time.Second)
	root := serve(t, m)
	fi, err := os.Stat(filepath.Join(root, SocketName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v; want mode 0600", fi, err)
	}
	answered := make(chan error, 1)
	go func() { _, err := Request(context.Background(), root); answered <- err }()
	polltest.Eventually(t, 5*time.Second, "the pod's kill", func() bool { return len(node.killed()) == 1 })
	select {
	case err := <-answered:
		t.Fatalf("request answered (%v) before the pod stopped", err)
	default:
	}
	node.stop("web")
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
}

func TestRequestToANodeWithoutGracePeriodFails(t *testing.T) {
	m, _, _ := newManager(t, newFakeNode(), 0, 0)
	_, err := Request(context.Background(), serve(t, m))
	if err == nil || !strings.Contains(err.Error(), "graceful node shutdown is off") {
		t.Errorf("Request = %v; want the shutdown is off", err)
	}
}

func TestRequestWithoutRunletFails(t *testing.T) {
	if _, err := Request(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no runlet answers on") {
		t.Errorf("Request = %v; want no runlet answers", err)
	}
}
