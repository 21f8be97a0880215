package podconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	utilio "k8s.io/utils/io"
)

// DefaultStaticPeriod is how often the file and http sources re-read their
// manifests, as the kubelet's fileCheckFrequency and httpCheckFrequency.
const DefaultStaticPeriod = 20 * time.Second

// FileSourceConfig configures the --pod-manifest-path source.
type FileSourceConfig struct {
	// Path is a directory of manifests (one pod per file) or a single file.
	Path     string
	NodeName string
	// Period defaults to DefaultStaticPeriod.
	Period time.Duration
	// Updates is the mux's channel for FileSource.
	Updates chan<- []*v1.Pod
	Log     logrus.FieldLogger
	// Recorder, if set, gets a Warning event on the node per bad manifest.
	Recorder record.EventRecorder
}

// fileSource reads manifests and remembers what each file's content gave,
// so an unchanged file is neither re-parsed nor re-reported.
type fileSource struct {
	cfg     FileSourceConfig
	files   map[string]*manifest
	lastErr string
	sent    bool
	// reported holds, per path, the problem last reported for it, so each
	// problem is logged and recorded once, however often it is re-read.
	reported map[string]string
}

type manifest struct {
	data []byte
	pod  *v1.Pod
	err  error
}

func newFileSource(cfg FileSourceConfig) *fileSource {
	cfg.Path = filepath.Clean(cfg.Path)
	if cfg.Period <= 0 {
		cfg.Period = DefaultStaticPeriod
	}
	return &fileSource{cfg: cfg, files: map[string]*manifest{}, reported: map[string]string{}}
}

// errSkip means there is nothing to send: the previous snapshot stands.
var errSkip = errors.New("no snapshot")

// scan returns the full snapshot of the path. A missing path is an empty
// snapshot, so the source still counts as seen (kubelet behaviour).
func (s *fileSource) scan() ([]*v1.Pod, error) {
	st, err := os.Stat(s.cfg.Path)
	switch {
	case os.IsNotExist(err):
		s.files, s.reported = map[string]*manifest{}, map[string]string{}
		return []*v1.Pod{}, fmt.Errorf("%s does not exist, no static pods", s.cfg.Path)
	case err != nil:
		return nil, err
	case st.IsDir():
		return s.scanDir()
	case st.Mode().IsRegular():
		pod, err := s.read(s.cfg.Path)
		s.problem(s.cfg.Path, err)
		if err != nil && !s.sent {
			// Bad from the start: no pod, but the source counts as seen, or
			// housekeeping would wait for it forever.
			return []*v1.Pod{}, nil
		}
		if err != nil {
			// A single manifest that turned bad keeps its pod, as on the kubelet.
			return nil, errSkip
		}
		return []*v1.Pod{pod}, nil
	}
	return nil, fmt.Errorf("%s is not a directory or regular file", s.cfg.Path)
}

// scanDir reads every non-hidden regular file, in name order; bad files are
// left out and reported, the others still count. Of two files defining the
// same pod (namespace and name), the first keeps it, as the kubelet keeps the
// first of a source's pods with one name; the second is reported naming both.
func (s *fileSource) scanDir() ([]*v1.Pod, error) {
	entries, err := os.ReadDir(s.cfg.Path)
	if err != nil {
		return nil, err
	}
	pods := []*v1.Pod{}
	seen := map[string]bool{}
	defined := map[string]string{} // pod full name -> the file defining it
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(s.cfg.Path, e.Name())
		st, err := os.Stat(path) // follows symlinks, as the kubelet does
		if err != nil || !st.Mode().IsRegular() {
			s.cfg.Log.WithField("path", path).Debug("not a regular file, skipped")
			continue
		}
		seen[path] = true
		pod, err := s.read(path)
		if err == nil {
			if first, dup := defined[fullName(pod)]; dup {
				name := strings.TrimSuffix(pod.Name, "-"+strings.ToLower(s.cfg.NodeName)) // as the manifest says it
				err = fmt.Errorf("pod %q in namespace %q is already defined by %s", name, pod.Namespace, first)
			} else {
				defined[fullName(pod)] = path
				pods = append(pods, pod)
			}
		}
		s.problem(path, err)
	}
	for path := range s.files {
		if !seen[path] {
			delete(s.files, path)
			delete(s.reported, path)
		}
	}
	return pods, nil
}

// read returns the file's pod, reusing the last result for unchanged content.
func (s *fileSource) read(path string) (*v1.Pod, error) {
	prev := s.files[path]
	data, err := readFile(path)
	if err != nil {
		s.files[path] = &manifest{err: err}
		return nil, err
	}
	if prev != nil && prev.data != nil && bytes.Equal(prev.data, data) {
		return prev.pod, prev.err // already parsed
	}
	pod, err := parseManifest(data, staticSource{kind: FileSource, location: path, nodeName: s.cfg.NodeName})
	s.files[path] = &manifest{data: data, pod: pod, err: err}
	return pod, err
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := utilio.ReadAtMost(f, maxConfigLength)
	if errors.Is(err, utilio.ErrLimitReached) {
		return nil, errTooLarge
	}
	return data, err
}

// parseManifest turns one file's content into a ready static pod.
func parseManifest(data []byte, src staticSource) (*v1.Pod, error) {
	pod, err := decodePod(data)
	if err != nil {
		return nil, fmt.Errorf("couldn't parse as pod (%w), please check config file", err)
	}
	if err := prepareStaticPod(pod, src); err != nil {
		return nil, err
	}
	return pod, nil
}

// problem reports why a manifest is ignored (err nil: it is fine), once per
// problem: an unchanged bad file re-read every period says nothing new.
func (s *fileSource) problem(path string, err error) {
	if err == nil || os.IsNotExist(err) { // a file removed while scanning is no problem
		delete(s.reported, path)
		return
	}
	if s.reported[path] == err.Error() {
		return
	}
	s.reported[path] = err.Error()
	s.cfg.Log.WithError(err).WithField("path", path).Error("static pod manifest ignored")
	if s.cfg.Recorder != nil {
		s.cfg.Recorder.Eventf(nodeRef(s.cfg.NodeName), v1.EventTypeWarning, ReasonInvalidManifest,
			"Static pod manifest %s ignored: %v", path, err)
	}
}

// list scans and sends the snapshot, logging why when there is none.
func (s *fileSource) list(ctx context.Context) {
	pods, err := s.scan()
	msg := ""
	if err != nil && !errors.Is(err, errSkip) {
		msg = err.Error()
	}
	if msg != "" && msg != s.lastErr {
		s.cfg.Log.WithError(err).WithField("path", s.cfg.Path).Warn("reading static pod manifests")
	}
	s.lastErr = msg
	if pods == nil {
		return
	}
	select {
	case <-ctx.Done():
	case s.cfg.Updates <- pods:
		s.sent = true
	}
}
