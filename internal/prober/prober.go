package prober

import (
	"context"
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/envvars/expansion"
	"github.com/runlet/runlet/internal/probe"
	"github.com/runlet/runlet/internal/prober/results"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// maxProbeRetries is how often a probe that errored (could not run at all)
// is retried before its error counts, as on the kubelet.
const maxProbeRetries = 3

// prober runs one probe of a container and says what it found, with the
// kubelet's events.
type prober struct {
	exec probe.Execer
	http *probe.HTTPProber
	rec  record.EventRecorder
	log  logrus.FieldLogger
}

func newProber(exec probe.Execer, rec record.EventRecorder, log logrus.FieldLogger) *prober {
	// Redirects to other hosts are not followed: their answer is a warning.
	return &prober{exec: exec, http: probe.NewHTTPProber(false), rec: rec, log: log}
}

// probe runs the container's probe of type t (podIP is where network probes
// go) and turns the outcome into a result.
func (pb *prober) probe(ctx context.Context, t ProbeType, pod *v1.Pod, podIP string, c *v1.Container, containerID string) (results.Result, error) {
	spec := t.spec(c)
	if spec == nil {
		return results.Success, nil
	}
	result, output, err := pb.runWithRetries(ctx, spec, podIP, c, containerID)
	// Built only when something is to be said: most probes succeed.
	log := func() logrus.FieldLogger {
		return pb.log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "container": c.Name, "probe": t.String()})
	}
	switch {
	case err != nil:
		log().WithError(err).Debug("probe errored")
		pb.event(pod, v1.EventTypeWarning, "Unhealthy", "%s probe errored and resulted in %s state: %s", t, result, err)
		return results.Failure, err
	case result == probe.Success:
		return results.Success, nil
	case result == probe.Warning:
		pb.event(pod, v1.EventTypeWarning, "ProbeWarning", "%s probe warning: %s", t, output)
		return results.Success, nil
	case result == probe.Failure:
		log().WithField("output", output).Debug("probe failed")
		pb.event(pod, v1.EventTypeWarning, "Unhealthy", "%s probe failed: %s", t, output)
	}
	return results.Failure, nil
}

func (pb *prober) runWithRetries(ctx context.Context, p *v1.Probe, podIP string, c *v1.Container, containerID string) (probe.Result, string, error) {
	var (
		result probe.Result
		output string
		err    error
	)
	for range maxProbeRetries {
		if result, output, err = pb.run(ctx, p, podIP, c, containerID); err == nil || ctx.Err() != nil {
			break
		}
	}
	return result, output, err
}

func (pb *prober) run(ctx context.Context, p *v1.Probe, podIP string, c *v1.Container, containerID string) (probe.Result, string, error) {
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	switch {
	case p.Exec != nil:
		// The exec probe sees the container's static env in $(VAR), not the
		// downward API, as on the kubelet.
		return probe.Exec(ctx, pb.exec, containerID, expandStatic(p.Exec.Command, c.Env), timeout)
	case p.HTTPGet != nil:
		req, err := probe.NewRequestForHTTPGetAction(p.HTTPGet, c, podIP, "probe")
		if err != nil {
			return probe.Unknown, "", err
		}
		return pb.http.Probe(req.WithContext(ctx), timeout)
	case p.TCPSocket != nil:
		port, err := probe.ResolveContainerPort(p.TCPSocket.Port, c)
		if err != nil {
			return probe.Unknown, "", err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		return probe.TCP(host, port, timeout)
	case p.GRPC != nil:
		service := ""
		if p.GRPC.Service != nil {
			service = *p.GRPC.Service
		}
		return probe.GRPC(podIP, service, int(p.GRPC.Port), timeout)
	}
	return probe.Unknown, "", fmt.Errorf("missing probe handler for %s", c.Name)
}

func (pb *prober) event(pod *v1.Pod, typ, reason, format string, args ...any) {
	if pb.rec != nil {
		pb.rec.Eventf(pod, typ, reason, format, args...)
	}
}

// expandStatic expands $(VAR) in cmd with the container's literal env values
// (the kubelet's ExpandContainerCommandOnlyStatic).
func expandStatic(cmd []string, env []v1.EnvVar) []string {
	vars := make(map[string]string, len(env))
	for _, e := range env {
		vars[e.Name] = e.Value
	}
	mapping := expansion.MappingFuncFor(vars)
	out := make([]string, 0, len(cmd))
	for _, s := range cmd {
		out = append(out, expansion.Expand(s, mapping))
	}
	return out
}
