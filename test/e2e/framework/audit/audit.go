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
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
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
	Denials  []string
}

// Runlet reads every audit log in dir (audit.log and its rotated files) and summarises the
// requests that runlet (user agent runlet/…) made as a node (system:node:…).
func Runlet(dir string) (Summary, error) {
	files, err := filepath.Glob(filepath.Join(dir, "audit*.log"))
	if err != nil || len(files) == 0 {
		return Summary{}, fmt.Errorf("no audit log in %s", dir)
	}
	var s Summary
	for _, f := range files {
		if err := s.read(f); err != nil {
			return s, err
		}
	}
	sort.Strings(s.Denials)
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
	if !strings.HasPrefix(e.User.Username, "system:node:") || !strings.HasPrefix(e.UserAgent, "runlet/") {
		return
	}
	s.Requests++
	if e.ResponseStatus == nil || e.ResponseStatus.Code != 403 {
		return
	}
	what := e.RequestURI
	if o := e.ObjectRef; o != nil {
		what = strings.TrimSuffix(o.Resource+"/"+o.Subresource, "/") + " " + strings.TrimPrefix(o.Namespace+"/"+o.Name, "/")
	}
	s.Denials = append(s.Denials, fmt.Sprintf("%s %s %s: %s", e.User.Username, e.Verb, what, e.ResponseStatus.Message))
}
