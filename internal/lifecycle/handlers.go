// Package lifecycle runs containers' lifecycle handlers (postStart and
// preStop hooks: exec, httpGet and sleep), as the kubelet's handler runner
// does. It shares the exec and HTTP machinery of the probes (internal/probe),
// as the kubelet's handlers share its HTTP probe's request builder.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/probe"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// maxRespBodyLength is how much of a hook's HTTP answer is drained.
const maxRespBodyLength = 10 * 1 << 10 // 10KB

// Runner runs lifecycle handlers.
type Runner struct {
	exec probe.Execer
	http *http.Client
	rec  record.EventRecorder
	log  logrus.FieldLogger
}

// NewRunner returns a runner that execs through exec (the backend) and
// records its HTTP fallback events with rec.
func NewRunner(exec probe.Execer, rec record.EventRecorder, log logrus.FieldLogger) *Runner {
	if log == nil {
		log = logrus.StandardLogger()
	}
	// Like the kubelet's lifecycle client: TLS unverified, redirects to
	// other hosts not followed, no timeout but the caller's context.
	return &Runner{exec: exec, http: probe.NewHTTPProber(false).Client(), rec: rec, log: log}
}

// Run runs handler h of container c (backend ID containerID) in pod; podIP
// is where an HTTP handler without a host goes. It returns a message for a
// failure, worded as the kubelet's, and the error. ctx bounds the handler:
// a preStop hook ends with the grace period.
func (r *Runner) Run(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, h *v1.LifecycleHandler) (string, error) {
	log := r.log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "container": c.Name})
	switch {
	case h.Exec != nil:
		out, err := probe.RunInContainer(ctx, r.exec, containerID, h.Exec.Command, 0)
		if err != nil {
			log.WithError(err).WithField("output", string(out)).Info("exec lifecycle hook failed")
			return fmt.Sprintf("Exec lifecycle hook (%v) for Container %q in Pod %q failed - error: %v, message: %q",
				h.Exec.Command, c.Name, podName(pod), err, string(out)), err
		}
		return "", nil
	case h.HTTPGet != nil:
		if err := r.runHTTP(ctx, pod, c, podIP, h.HTTPGet); err != nil {
			log.WithError(err).Info("HTTP lifecycle hook failed")
			return fmt.Sprintf("HTTP lifecycle hook (%s) for Container %q in Pod %q failed - error: %v",
				h.HTTPGet.Path, c.Name, podName(pod), err), err
		}
		return "", nil
	case h.Sleep != nil:
		if err := sleep(ctx, h.Sleep.Seconds); err != nil {
			return fmt.Sprintf("Sleep lifecycle hook (%d) for Container %q in Pod %q failed - error: %v",
				h.Sleep.Seconds, c.Name, podName(pod), err), err
		}
		return "", nil
	}
	err := fmt.Errorf("invalid handler: %v", h)
	return fmt.Sprintf("Cannot run handler: %v", err), err
}

// sleep waits, or ends early with an error when ctx does (the container is
// being stopped sooner than the sleep: a shorter grace period).
func sleep(ctx context.Context, seconds int64) error {
	t := time.NewTimer(time.Duration(seconds) * time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return errors.New("container terminated before sleep hook finished")
	case <-t.C:
		return nil
	}
}

// runHTTP sends the hook's GET. An HTTPS hook answered in plain HTTP is
// retried over HTTP, with an event, as the kubelet does.
func (r *Runner) runHTTP(ctx context.Context, pod *v1.Pod, c *v1.Container, podIP string, get *v1.HTTPGetAction) error {
	if get.Host == "" && podIP == "" {
		return errors.New("failed to find networking container: the pod has no IP")
	}
	req, err := probe.NewRequestForHTTPGetAction(get, c, podIP, "lifecycle")
	if err != nil {
		return err
	}
	resp, err := r.http.Do(req.WithContext(ctx))
	discardBody(resp)
	if !isHTTPResponseError(err) {
		return err
	}
	req = req.Clone(ctx)
	req.URL.Scheme = "http"
	req.Header.Del("Authorization")
	resp, httpErr := r.http.Do(req)
	discardBody(resp)
	if httpErr != nil {
		return err
	}
	if r.rec != nil {
		r.rec.Eventf(pod, v1.EventTypeWarning, "LifecycleHTTPFallback",
			"request to HTTPS lifecycle hook %s got HTTP response, retry with HTTP succeeded", req.URL.Host)
	}
	return nil
}

func discardBody(resp *http.Response) {
	if resp == nil {
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.ContentLength <= maxRespBodyLength {
		_, _ = io.Copy(io.Discard, &io.LimitedReader{R: resp.Body, N: maxRespBodyLength})
	}
}

func isHTTPResponseError(err error) bool {
	var urlErr *url.Error
	return err != nil && errors.As(err, &urlErr) && strings.Contains(urlErr.Err.Error(), "server gave HTTP response to HTTPS client")
}

func podName(pod *v1.Pod) string { return pod.Name + "_" + pod.Namespace + "(" + string(pod.UID) + ")" }
