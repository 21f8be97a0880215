package podconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settleDelay lets a burst of events (an editor's create, write, chmod) end
// before the rescan, so a half-written file is not reported as invalid.
const settleDelay = 100 * time.Millisecond

// RunFileSource sends a snapshot now, after every change under the path, and
// every Period (which also catches changes inotify cannot see, such as a
// symlink target's content). It returns when ctx ends.
func RunFileSource(ctx context.Context, cfg FileSourceConfig) {
	s := newFileSource(cfg)
	s.cfg.Log.WithField("path", s.cfg.Path).Info("watching static pod manifests")
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.cfg.Log.WithError(err).Warn("no inotify: static pod manifests are re-read every period only")
	} else {
		defer w.Close()
		s.watch(w)
	}
	s.list(ctx)
	tick := time.NewTicker(s.cfg.Period)
	defer tick.Stop()
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	events, errs := watcherChans(w)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.watch(w)
			s.list(ctx)
		case ev := <-events:
			if s.relevant(ev) {
				settle.Reset(settleDelay)
			}
		case err := <-errs:
			s.cfg.Log.WithError(err).Warn("watching static pod manifests")
		case <-settle.C:
			s.watch(w)
			s.list(ctx)
		}
	}
}

// watchDir is the directory inotify watches: the path, or a single
// manifest's parent (editors replace files, which would drop a file watch).
func (s *fileSource) watchDir() string {
	if st, err := os.Stat(s.cfg.Path); err == nil && !st.IsDir() {
		return filepath.Dir(s.cfg.Path)
	}
	return s.cfg.Path
}

// watch (re)adds the watch; the directory may appear or be replaced later.
func (s *fileSource) watch(w *fsnotify.Watcher) {
	if w == nil || len(w.WatchList()) > 0 {
		return
	}
	if err := w.Add(s.watchDir()); err != nil {
		s.cfg.Log.WithError(err).WithField("path", s.cfg.Path).Debug("cannot watch static pod manifests yet")
	}
}

// relevant ignores hidden files and, for a single manifest, its neighbours.
func (s *fileSource) relevant(ev fsnotify.Event) bool {
	name := filepath.Clean(ev.Name)
	if name == s.cfg.Path {
		return true
	}
	if strings.HasPrefix(filepath.Base(name), ".") {
		return false
	}
	return s.watchDir() == s.cfg.Path
}

func watcherChans(w *fsnotify.Watcher) (<-chan fsnotify.Event, <-chan error) {
	if w == nil {
		return nil, nil
	}
	return w.Events, w.Errors
}
