// Package logs rotates containers' log files as the kubelet's container log
// manager does (pkg/kubelet/logs): a log that outgrew its maximum size is
// renamed with a timestamp and the runtime reopens it; older rotated files
// are compressed, and only the newest few are kept.
package logs

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/sirupsen/logrus"
)

// Config sets a Manager up.
type Config struct {
	// Backend's files role: the containers' log files (no LogPath: no file
	// runlet can reach) and their reopening.
	Backend runtime.Files
	// Running lists the IDs of the containers that run now.
	Running func() []string
	// MaxSize is the size a log may reach before it is rotated.
	MaxSize int64
	// MaxFiles is how many files a container's log may span, the live one
	// included (at least 2).
	MaxFiles int
	Log      logrus.FieldLogger
}

// Manager rotates logs.
type Manager struct {
	cfg Config
	now func() time.Time
}

// monitorPeriod is how often logs are checked (the kubelet's
// --container-log-monitor-interval default).
const monitorPeriod = 10 * time.Second

const (
	timestampFormat = "20060102-150405"
	compressSuffix  = ".gz"
	tmpSuffix       = ".tmp"
)

// New returns a manager; Run starts it.
func New(cfg Config) (*Manager, error) {
	if cfg.MaxFiles < 2 {
		return nil, fmt.Errorf("container log max files must be at least 2, not %d", cfg.MaxFiles)
	}
	if cfg.MaxSize <= 0 {
		return nil, fmt.Errorf("container log max size must be positive, not %d", cfg.MaxSize)
	}
	return &Manager{cfg: cfg, now: time.Now}, nil
}

// Run checks every running container's log each monitor period until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(monitorPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.RotateAll(ctx)
		}
	}
}

// RotateAll rotates the logs of running containers that outgrew MaxSize.
func (m *Manager) RotateAll(ctx context.Context) {
	for _, id := range m.cfg.Running() {
		files, err := m.cfg.Backend.ContainerFiles(ctx, id)
		path := files.LogPath
		if err != nil || path == "" {
			continue
		}
		if err := m.rotate(ctx, id, path); err != nil {
			m.cfg.Log.WithError(err).WithField("container", id).Warn("rotating the container's log failed")
		}
	}
}

func (m *Manager) rotate(ctx context.Context, id, path string) error {
	st, err := os.Stat(path)
	if err != nil || st.Size() < m.cfg.MaxSize {
		return nil
	}
	rotated, err := m.rotatedFiles(path)
	if err != nil {
		return err
	}
	// Room for the file about to be rotated: MaxFiles-2 older ones stay.
	for len(rotated) > m.cfg.MaxFiles-2 {
		if err := os.Remove(rotated[0]); err != nil && !os.IsNotExist(err) {
			return err
		}
		rotated = rotated[1:]
	}
	for _, f := range rotated {
		if !strings.HasSuffix(f, compressSuffix) {
			if err := compress(f); err != nil {
				return err
			}
		}
	}
	next := path + "." + m.now().Format(timestampFormat)
	if err := os.Rename(path, next); err != nil {
		return err
	}
	if err := m.cfg.Backend.ReopenContainerLog(ctx, id); err != nil {
		// The runtime still writes to the renamed file: give it its name back.
		if rerr := os.Rename(next, path); rerr != nil {
			return fmt.Errorf("reopening the log: %v; and restoring its name: %w", err, rerr)
		}
		return fmt.Errorf("reopening the log: %w", err)
	}
	m.cfg.Log.WithFields(logrus.Fields{"container": id, "size": st.Size()}).Debug("container log rotated")
	return nil
}

// rotatedFiles lists path's rotated files, oldest first; leftovers of an
// interrupted compression are removed.
func (m *Manager) rotatedFiles(path string) ([]string, error) {
	all, err := filepath.Glob(path + ".*")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range all {
		if strings.HasSuffix(f, tmpSuffix) {
			_ = os.Remove(f)
			continue
		}
		out = append(out, f)
	}
	// The timestamp sorts by name; a compressed file sorts with its original.
	sort.Slice(out, func(i, j int) bool {
		return strings.TrimSuffix(out[i], compressSuffix) < strings.TrimSuffix(out[j], compressSuffix)
	})
	return out, nil
}

// compress replaces f by f.gz.
func compress(f string) error {
	in, err := os.Open(f)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := f + compressSuffix + tmpSuffix
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(out)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("compressing %s: %w", f, err)
	}
	if err := os.Rename(tmp, f+compressSuffix); err != nil {
		return err
	}
	return os.Remove(f)
}
