package containerlog

import (
	"errors"
	"io"
	"math"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

var errLimitReached = errors.New("log byte limit reached")

// writer applies since, timestamps and limitBytes to parsed lines.
type writer struct {
	stdout, stderr io.Writer
	since          time.Time
	timestamps     bool
	remain         int64
	// newLine is whether the next message starts a line: only then does it
	// get a timestamp, so a line split into partials is prefixed once.
	newLine bool
}

func newWriter(stdout, stderr io.Writer, opts runtime.LogOptions) *writer {
	w := &writer{stdout: stdout, stderr: stderr, since: opts.Since, timestamps: opts.Timestamps, remain: math.MaxInt64, newLine: true}
	if opts.LimitBytes > 0 {
		w.remain = opts.LimitBytes
	}
	return w
}

func (w *writer) write(msg *message) error {
	defer func() { w.newLine = len(msg.log) == 0 || msg.log[len(msg.log)-1] == '\n' }()
	if msg.timestamp.Before(w.since) {
		return nil
	}
	out := w.stdout
	if msg.stream == Stderr {
		out = w.stderr
	}
	if out == nil {
		return nil
	}
	line := msg.log
	if w.timestamps && w.newLine {
		line = append(append([]byte(msg.timestamp.Format(timeFormatOut)), ' '), line...)
	}
	if int64(len(line)) > w.remain {
		line = line[:w.remain]
	}
	n, err := out.Write(line)
	w.remain -= int64(n)
	if err != nil {
		return err
	}
	if n < len(line) {
		return io.ErrShortWrite
	}
	if w.remain <= 0 {
		return errLimitReached
	}
	return nil
}
