// Package audit reads the local control plane's audit log (hack/audit-policy.yaml) for what the
// apiserver refused runlet's node identity: the proof that runlet needs no right a kubelet lacks.
package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// event is the part of an audit.k8s.io/v1 Event that names a request and its answer.
type event struct {
	Stage          string `json:"stage"`
	StageTimestamp string `json:"stageTimestamp"`
	Verb           string `json:"verb"`
	User           struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestURI     string `json:"requestURI"`
	ResponseStatus *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"responseStatus"`
}

// Summary counts runlet's requests as a node and lists those refused.
type Summary struct {
	Requests int
	// Denials are the refusals that stood: no later request for the same object by the same node
	// succeeded.
	Denials []string
	// Transient are refusals of a read that a later read of the same object by the same node got
	// through: the Node authorizer learns of a pod's objects from its own watch of pods, which can
	// be a moment behind the node's, so the first read of a new pod's claim or secret may come
	// too early. The kubelet meets the same, and retries as runlet does.
	Transient []string

	refused map[string][]string // object key -> refusals not yet followed by a success
	agent   string              // the user agent's prefix: "runlet/"
}

// Runlet reads every audit log in dir (audit.log and its rotated files) and summarises the
// requests that runlet (user agent runlet/…) made as a node (system:node:…).
func Runlet(dir string) (Summary, error) { return Agent(dir, "runlet") }

// Agent is Runlet for the node agent whose user agent starts with agent + "/": the kubelet's
// ("kubelet") for a reference run against the kubelet itself.
func Agent(dir, agent string) (Summary, error) {
	files, err := filepath.Glob(filepath.Join(dir, "audit*.log"))
	if err != nil || len(files) == 0 {
		return Summary{}, fmt.Errorf("no audit log in %s", dir)
	}
	// Oldest first: the rotated audit-<time>.log files by their time, then audit.log.
	sort.Slice(files, func(i, j int) bool {
		if current(files[i]) != current(files[j]) {
			return current(files[j])
		}
		return files[i] < files[j]
	})
	s := Summary{refused: map[string][]string{}, agent: agent + "/"}
	for _, f := range files {
		if err := s.read(f); err != nil {
			return s, err
		}
	}
	for _, d := range s.refused {
		s.Denials = append(s.Denials, d...)
	}
	sort.Strings(s.Denials)
	sort.Strings(s.Transient)
	return s, nil
}

func (s *Summary) read(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			s.add(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *Summary) add(line []byte) {
	var e event
	if json.Unmarshal(line, &e) != nil || e.Stage != "ResponseComplete" && e.Stage != "Panic" {
		return
	}
	if !strings.HasPrefix(e.User.Username, "system:node:") || !strings.HasPrefix(e.UserAgent, s.agent) {
		return
	}
	s.Requests++
	key := e.User.Username + " " + e.RequestURI
	if o := e.ObjectRef; o != nil {
		key = e.User.Username + " " + o.Resource + "/" + o.Subresource + " " + o.Namespace + "/" + o.Name
	}
	code := 0
	if e.ResponseStatus != nil {
		code = e.ResponseStatus.Code
	}
	switch {
	case code >= 200 && code < 300:
		s.Transient = append(s.Transient, s.refused[key]...)
		delete(s.refused, key)
	case code == 403 && !strings.Contains(e.ResponseStatus.Message, "because it is being terminated"):
		// (A namespace being deleted refuses new events to everyone: not a right a node lacks.)
		what := e.RequestURI
		if o := e.ObjectRef; o != nil {
			what = strings.TrimSuffix(o.Resource+"/"+o.Subresource, "/") + " " + strings.TrimPrefix(o.Namespace+"/"+o.Name, "/")
		}
		s.refused[key] = append(s.refused[key], fmt.Sprintf("%s %s %s %s: %s", e.StageTimestamp, e.User.Username, e.Verb, what, e.ResponseStatus.Message))
	}
}

// current reports the log the apiserver writes now, as opposed to a rotated one.
func current(path string) bool { return filepath.Base(path) == "audit.log" }
