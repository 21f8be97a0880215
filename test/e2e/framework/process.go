package framework

import (
	"os"
	"time"
)

// SignalAndWait sends sig to p and waits until done is closed (by whoever
// waits for p). If p is still there after timeout it is killed, and once it
// is gone SignalAndWait reports false.
func SignalAndWait(p *os.Process, sig os.Signal, done <-chan struct{}, timeout time.Duration) bool {
	_ = p.Signal(sig)
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		_ = p.Kill()
		<-done
		return false
	}
}
