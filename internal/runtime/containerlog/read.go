package containerlog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// Polling instead of inotify keeps this small: a read at EOF is one syscall,
// and a follower is at most pollInterval behind the writer. The container's
// state costs a backend call, so it is asked less often.
var (
	pollInterval     = 100 * time.Millisecond
	stateCheckPeriod = 500 * time.Millisecond
)

// RunningFunc reports whether the container still runs; following stops once
// it does not and the file is drained.
type RunningFunc func(ctx context.Context) bool

// Read copies the log at path to stdout and stderr as opts select. A nil
// writer drops its stream (and its bytes do not count against LimitBytes).
func Read(ctx context.Context, path string, opts runtime.LogOptions, stdout, stderr io.Writer, running RunningFunc) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	start, err := tailStart(f, st.Size(), opts.TailLines)
	if err != nil {
		return fmt.Errorf("tailing %s: %w", path, err)
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return err
	}
	r := &reader{br: bufio.NewReader(f), w: newWriter(stdout, stderr, opts), follow: opts.Follow, running: running, left: -1}
	if opts.TailLines >= 0 && !opts.Follow {
		// Stop after the tailed lines even if the file grows meanwhile.
		r.left = opts.TailLines
	}
	err = r.run(ctx)
	if errors.Is(err, errLimitReached) {
		return nil
	}
	return err
}

type reader struct {
	br      *bufio.Reader
	w       *writer
	follow  bool
	running RunningFunc
	left    int64 // lines still to copy; -1 means no limit
	pending []byte
}

func (r *reader) run(ctx context.Context) error {
	var lastCheck time.Time
	exited := false
	for r.left != 0 {
		line, err := r.br.ReadBytes('\n')
		r.pending = append(r.pending, line...)
		if err == nil {
			if err := r.emit(); err != nil {
				return err
			}
			continue
		}
		if err != io.EOF {
			return err
		}
		if !r.follow || exited {
			// A last line without its newline is still shown, as the kubelet does.
			return r.emit()
		}
		if time.Since(lastCheck) >= stateCheckPeriod {
			lastCheck = time.Now()
			if r.running != nil && !r.running(ctx) {
				exited = true // drain what was written before the exit, then stop
				continue
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	return nil
}

// emit writes the pending line; malformed lines are skipped, as in the kubelet.
func (r *reader) emit() error {
	line := r.pending
	r.pending = r.pending[:0]
	if len(line) == 0 {
		return nil
	}
	var msg message
	if parseLine(line, &msg) != nil {
		return nil
	}
	if r.left > 0 {
		r.left--
	}
	return r.w.write(&msg)
}
