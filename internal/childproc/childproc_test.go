package childproc

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// TestOutlivesCallersThread starts a child from a thread that Go then ends:
// the child must live on.
func TestOutlivesCallersThread(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	var done <-chan struct{}
	var err error
	onEndingThread(func() { done, err = Start(cmd, syscall.SIGKILL) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	select {
	case <-done:
		t.Fatalf("the child died with the thread that asked for it: %v", cmd.ProcessState)
	case <-time.After(time.Second):
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("child: %v", err)
	}
}

func TestExitIsReported(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	done, err := Start(cmd, syscall.SIGTERM)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exit code %d; want 3", code)
	}
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGTERM {
		t.Errorf("Pdeathsig %v; want SIGTERM", cmd.SysProcAttr.Pdeathsig)
	}
}

func TestStartError(t *testing.T) {
	if _, err := Start(exec.Command("/nonexistent/binary"), syscall.SIGKILL); err == nil {
		t.Error("a binary that does not exist started")
	}
}

// onEndingThread runs fn on a thread that ends afterwards: a goroutine that
// exits locked takes its thread with it, except the process's main thread,
// which Go keeps; while one goroutine holds a thread locked, another that
// locks gets a different one, so one of the two is not the main thread.
func onEndingThread(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked
		if syscall.Gettid() != syscall.Getpid() {
			fn()
			return
		}
		inner := make(chan struct{})
		go func() {
			defer close(inner)
			runtime.LockOSThread() // never unlocked
			fn()
		}()
		<-inner
	}()
	<-done
}
