package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// NodeEventNamespace is where events about a Node land (a Node has no
// namespace; client-go's recorder files them under "default").
const NodeEventNamespace = metav1.NamespaceDefault

// Events lists the events in ns about the object called name, of the given
// kind when kind is not empty.
func Events(ns, kind, name string) ([]v1.Event, error) {
	c := cluster
	if c == nil {
		return nil, fmt.Errorf("framework: no control plane (TestMain must call framework.Main)")
	}
	sel := fields.Set{"involvedObject.name": name}
	if kind != "" {
		sel["involvedObject.kind"] = kind
	}
	l, err := c.Client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// WaitForEvent waits for an event about the object for which match holds
// and returns it; on timeout the test fails with the events there were.
func WaitForEvent(t testing.TB, ns, kind, name string, timeout time.Duration, what string, match func(*v1.Event) bool) *v1.Event {
	t.Helper()
	var found *v1.Event
	var seen []v1.Event
	err := poll(timeout, func() (bool, error) {
		evs, err := Events(ns, kind, name)
		if err != nil {
			return false, err
		}
		seen = evs
		for i := range evs {
			if match(&evs[i]) {
				found = &evs[i]
				return true, nil
			}
		}
		return false, nil
	}, false)
	if err != nil {
		t.Fatalf("waiting for an event about %s %s/%s (%s): %v\nevents:\n%s", kind, ns, name, what, err, FormatEvents(seen))
	}
	return found
}

// FormatEvents renders events one a line, for failure messages.
func FormatEvents(evs []v1.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s %s x%d (%s): %s\n", e.Type, e.Reason, e.Count, e.Source.Component, e.Message)
	}
	return b.String()
}
