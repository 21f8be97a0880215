package conmon

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOOMMark(t *testing.T) {
	bundle := t.TempDir()
	if OOMMarked(bundle) || OOMMarked("") {
		t.Fatal("an OOM mark where none was written")
	}
	MarkOOM(bundle)
	MarkOOM(bundle) // a second mark changes nothing
	MarkOOM("")
	if !OOMMarked(bundle) {
		t.Error("no OOM mark after MarkOOM")
	}
}

// TestReopenLog: the message reaches a conmon reading the control FIFO,
// and with none reading the call fails at once instead of hanging.
func TestReopenLog(t *testing.T) {
	bundle := t.TempDir()
	ctl := filepath.Join(bundle, "ctl")
	if err := syscall.Mkfifo(ctl, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReopenLog(bundle); err == nil {
		t.Error("ReopenLog without a reader succeeded")
	}
	r, err := os.OpenFile(ctl, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := ReopenLog(bundle); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, _ := r.Read(buf); string(buf[:n]) != reopenLogMessage {
		t.Errorf("conmon read %q; want %q", buf[:n], reopenLogMessage)
	}
}
