package scale

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The apiserver's audit log (hack/audit-policy.yaml: every request of
// system:nodes, metadata only) names the client of each request, which
// /metrics does not: it splits the requests and watches by node identity.

// auditEvent is the part of an audit.k8s.io/v1 Event the split needs.
type auditEvent struct {
	AuditID        string    `json:"auditID"`
	Stage          string    `json:"stage"`
	StageTimestamp time.Time `json:"stageTimestamp"`
	Verb           string    `json:"verb"`
	User           struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// metricVerbs are the audit log's verbs as apiserver_request_total spells them.
var metricVerbs = map[string]string{"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE",
	"deletecollection": "DELETE"}

// key is the event's "VERB resource[/subresource]", the verb as /metrics
// spells it.
func (e *auditEvent) key() string {
	verb, ok := metricVerbs[e.Verb]
	if !ok {
		verb = strings.ToUpper(e.Verb)
	}
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		return ""
	}
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	return verb + " " + r
}

// auditSplit is one set's share of the audit log.
type auditSplit struct {
	// requests in the window, each counted once, by key.
	requests map[string]float64
	// watches open at the window's end, by key.
	watches map[string]float64
	// identities is how many of the set's nodes made a request in the window.
	identities int
}

// readAudit splits the audit log of dir for the nodes whose user is
// system:node:<prefix>…: their requests in [from, to) and their watches
// open at to.
func readAudit(dir, prefix string, from, to time.Time) (auditSplit, error) {
	s := auditSplit{requests: map[string]float64{}, watches: map[string]float64{}}
	files, err := filepath.Glob(filepath.Join(dir, "audit*.log"))
	if err != nil {
		return s, err
	}
	sort.Strings(files) // the rotated audit-<time>.log files sort before audit.log
	counted := map[string]bool{}
	open := map[string]string{}
	users := map[string]bool{}
	user := "system:node:" + prefix
	for _, f := range files {
		err := eachEvent(f, func(e *auditEvent) {
			if !strings.HasPrefix(e.User.Username, user) || e.StageTimestamp.After(to) {
				return
			}
			k := e.key()
			if k == "" {
				return
			}
			if e.Verb == "watch" {
				switch e.Stage {
				case "ResponseStarted":
					open[e.AuditID] = k
				case "ResponseComplete", "Panic":
					delete(open, e.AuditID)
				}
			}
			if e.StageTimestamp.Before(from) || counted[e.AuditID] {
				counted[e.AuditID] = true
				return
			}
			counted[e.AuditID] = true
			s.requests[k]++
			users[e.User.Username] = true
		})
		if err != nil {
			return s, err
		}
	}
	for _, k := range open {
		s.watches[k]++
	}
	s.identities = len(users)
	return s, nil
}

func eachEvent(path string, fn func(*auditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			fn(&e)
		}
	}
	return sc.Err()
}
