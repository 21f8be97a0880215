package nodeshutdown

import (
	"context"
	"io"
	"time"

	"github.com/sirupsen/logrus"
)

// logindReconnect is how soon a lost system bus is tried again (the
// kubelet's dbusReconnectPeriod).
const logindReconnect = time.Second

// Inhibitor is logind as the shutdown needs it (logind.Conn).
type Inhibitor interface {
	InhibitDelayMax() (time.Duration, error)
	OverrideInhibitDelay(time.Duration) error
	Inhibit() (io.Closer, error)
	PrepareForShutdown() (<-chan bool, error)
	Close() error
}

// WatchLogind holds logind's delay lock on shutdown and runs the node's
// shutdown on PrepareForShutdown(true), until ctx ends, as the kubelet's
// manager does. Where there is no system bus, or no logind on it (hosts
// without systemd or elogind), it returns at once, saying so once at debug
// level: `runlet shutdown` is the trigger there.
func WatchLogind(ctx context.Context, m *Manager, connect func() (Inhibitor, error), log logrus.FieldLogger) {
	if !m.Enabled() {
		return
	}
	first := true
	for ctx.Err() == nil {
		w, err := startLogind(m, connect, log)
		if err != nil {
			if first {
				log.WithError(err).Debug("no logind on the system bus: the node shuts down on `runlet shutdown` only")
				return
			}
			log.WithError(err).Warn("logind: watching for the host's shutdown again failed")
		} else {
			if first {
				log.Info("logind: holding the host's shutdown back for the node's pods")
			}
			w.run(ctx)
		}
		first = false
		select {
		case <-ctx.Done():
		case <-time.After(logindReconnect):
		}
	}
}

// logindWatch is one connection's watch.
type logindWatch struct {
	m      *Manager
	conn   Inhibitor
	lock   io.Closer
	events <-chan bool
	log    logrus.FieldLogger
}

// startLogind connects, makes sure logind waits long enough, takes the
// lock and subscribes to PrepareForShutdown.
func startLogind(m *Manager, connect func() (Inhibitor, error), log logrus.FieldLogger) (*logindWatch, error) {
	conn, err := connect()
	if err != nil {
		return nil, err
	}
	delay, err := conn.InhibitDelayMax()
	if err != nil {
		conn.Close()
		return nil, err
	}
	if want := total(m.cfg.Periods); want > delay {
		raiseInhibitDelay(conn, delay, want, log)
	}
	w := &logindWatch{m: m, conn: conn, log: log}
	if w.lock, err = conn.Inhibit(); err != nil {
		conn.Close()
		return nil, err
	}
	if w.events, err = conn.PrepareForShutdown(); err != nil {
		w.lock.Close()
		conn.Close()
		return nil, err
	}
	return w, nil
}

// raiseInhibitDelay asks logind to wait for the whole shutdown; where it
// cannot (no systemd to reload logind, or a later drop-in wins), the
// shutdown runs within what logind gives, with a warning.
func raiseInhibitDelay(conn Inhibitor, delay, want time.Duration, log logrus.FieldLogger) {
	log = log.WithField("InhibitDelayMaxSec", delay).WithField("shutdownGracePeriod", want)
	if err := conn.OverrideInhibitDelay(want); err != nil {
		log.WithError(err).Warn("logind: cannot raise InhibitDelayMaxSec to the shutdown grace period")
		return
	}
	// logind reads its configuration asynchronously.
	for wait := 100 * time.Millisecond; wait <= 1600*time.Millisecond; wait *= 2 {
		if d, err := conn.InhibitDelayMax(); err == nil && d >= want {
			return
		}
		time.Sleep(wait)
	}
	log.Warn("logind: InhibitDelayMaxSec is still below the shutdown grace period: the host may go down before the pods have stopped")
}

// run follows PrepareForShutdown until ctx ends or the bus goes: a
// shutdown stops the pods, then lets the host go on; a cancelled one
// takes the lock again.
func (w *logindWatch) run(ctx context.Context) {
	defer w.conn.Close()
	defer func() {
		if w.lock != nil {
			w.lock.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case active, ok := <-w.events:
			if !ok {
				w.log.Warn("logind: the system bus connection ended")
				return
			}
			if active {
				w.shutdown(ctx)
			} else {
				w.cancel()
			}
		}
	}
}

func (w *logindWatch) shutdown(ctx context.Context) {
	w.log.Info("logind: the host is shutting down")
	if done, err := w.m.Shutdown(ctx); err == nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	if w.lock != nil {
		w.lock.Close()
		w.lock = nil
	}
}

func (w *logindWatch) cancel() {
	w.log.Info("logind: the host's shutdown was called off")
	w.m.Cancel()
	if w.lock != nil {
		return
	}
	lock, err := w.conn.Inhibit()
	if err != nil {
		w.log.WithError(err).Warn("logind: taking the inhibitor lock again failed")
		return
	}
	w.lock = lock
}
