package conmon

import (
	"os"
	"path/filepath"
	"syscall"
)

// conmon marks an OOM kill with an "oom" file in the container's bundle,
// from which podman's inspect reports OOMKilled.

// MarkOOM writes conmon's "oom" file into a bundle, so that the runtime's
// own state says OOMKilled too, for a kill conmon missed; best effort.
func MarkOOM(bundle string) {
	if bundle == "" {
		return
	}
	p := filepath.Join(bundle, "oom")
	if _, err := os.Stat(p); err == nil {
		return
	}
	if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		_ = f.Close()
	}
}

// OOMMarked reports the "oom" file in a bundle, conmon's or MarkOOM's.
func OOMMarked(bundle string) bool {
	if bundle == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(bundle, "oom"))
	return err == nil
}

// reopenLogMessage is conmon's control message "reopen the log files"
// (type 2), which CRI-O's ReopenContainerLog sends the same way.
const reopenLogMessage = "2 0 0\n"

// ReopenLog makes the container's conmon write to a new file at the log's
// path, through the control FIFO in the container's bundle.
func ReopenLog(bundle string) error {
	// Non-blocking: with no conmon reading (it exited), opening fails at
	// once instead of hanging.
	f, err := os.OpenFile(filepath.Join(bundle, "ctl"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(reopenLogMessage)
	return err
}
