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
	defer func() { f.Close() }()
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
	r := &reader{f: f, path: path, br: bufio.NewReader(f), w: newWriter(stdout, stderr, opts), follow: opts.Follow, running: running, left: -1}
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
	// f is the file being read; path names the log, which a rotation moves
	// to another name while the runtime goes on in a new file at path.
	f       *os.File
	path    string
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
		if next := r.rotatedTo(); next != nil {
			// The old file is read to its end (the runtime may have written
			// to it until it reopened the log), then the new one from the start.
			if err := r.drain(ctx); err != nil {
				next.Close()
				return err
			}
			r.f.Close()
			r.f = next
			r.br.Reset(next)
			continue
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

// rotatedTo opens the file now at path when it is not the one being read:
// the log was rotated. It returns nil otherwise, also between the rename and
// the runtime's reopening, when path does not exist yet.
func (r *reader) rotatedTo() *os.File {
	st, err := os.Stat(r.path)
	if err != nil {
		return nil
	}
	if cur, err := r.f.Stat(); err != nil || os.SameFile(st, cur) {
		return nil
	}
	next, err := os.Open(r.path)
	if err != nil {
		return nil
	}
	return next
}

// drain copies what is left of the current file.
func (r *reader) drain(ctx context.Context) error {
	for r.left != 0 && ctx.Err() == nil {
		line, err := r.br.ReadBytes('\n')
		r.pending = append(r.pending, line...)
		if err != nil {
			return ignoreEOF(err)
		}
		if err := r.emit(); err != nil {
			return err
		}
	}
	return nil
}

func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
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
