package podconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	utilio "k8s.io/utils/io"
)

// HTTPSourceConfig configures the --manifest-url source.
type HTTPSourceConfig struct {
	URL      string
	Header   http.Header
	NodeName string
	// Period defaults to DefaultStaticPeriod.
	Period time.Duration
	// Updates is the mux's channel for HTTPSource.
	Updates chan<- []*v1.Pod
	Log     logrus.FieldLogger
	// Client defaults to one with the kubelet's 10 s timeout.
	Client *http.Client
	// Recorder, if set, gets a Warning event on the node per new problem.
	Recorder record.EventRecorder
}

// ParseURLHeaders turns --manifest-url-header values into headers. Each value
// is a comma-separated list of 'Key:Value' pairs, as the kubelet's flag.
func ParseURLHeaders(values []string) (http.Header, error) {
	h := http.Header{}
	for _, v := range values {
		for _, pair := range strings.Split(v, ",") {
			if pair == "" {
				continue
			}
			k, val, ok := strings.Cut(pair, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("malformed header %q, expected Key:Value", pair)
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(val))
		}
	}
	return h, nil
}

// httpSource keeps the last body and what it gave: an unchanged body resends
// the same snapshot without parsing again.
type httpSource struct {
	cfg      HTTPSourceConfig
	data     []byte
	pods     []*v1.Pod
	badData  []byte
	badErr   error
	failures int
	// reported is the problem last reported, so a URL failing the same way
	// at every poll is reported once.
	reported string
}

// RunHTTPSource polls the URL now and every Period until ctx ends. A failed
// fetch sends nothing, so the last good snapshot stays (kubelet behaviour);
// until one fetch succeeds the source is not seen, and housekeeping waits.
func RunHTTPSource(ctx context.Context, cfg HTTPSourceConfig) {
	if cfg.Period <= 0 {
		cfg.Period = DefaultStaticPeriod
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	s := &httpSource{cfg: cfg}
	s.cfg.Log.WithField("url", cfg.URL).Info("polling static pod manifests")
	tick := time.NewTicker(cfg.Period)
	defer tick.Stop()
	for {
		s.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// poll fetches once, sends a snapshot if there is one and reports the
// outcome: a new problem as a Warning event on the node and a warning in the
// log, a repeated one quieter after three failures in a row, as the kubelet.
func (s *httpSource) poll(ctx context.Context) {
	pods, err := s.fetch(ctx)
	if ctx.Err() != nil {
		return // shutting down: a cancelled request is no failure
	}
	s.report(err)
	if pods == nil {
		return
	}
	select {
	case <-ctx.Done():
	case s.cfg.Updates <- pods:
	}
}

// fetch returns the snapshot to send (nil: none) and what went wrong.
func (s *httpSource) fetch(ctx context.Context) ([]*v1.Pod, error) {
	data, err := s.get(ctx)
	switch {
	case err != nil:
		return nil, err
	case len(data) == 0:
		// An empty body means no static pods, as on the kubelet.
		s.data, s.pods = nil, []*v1.Pod{}
		return s.pods, errEmptyBody
	case s.data != nil && bytes.Equal(data, s.data):
		return s.pods, nil
	case s.badData != nil && bytes.Equal(data, s.badData):
		return nil, s.badErr
	}
	pods, err := parseURLManifests(data, staticSource{kind: HTTPSource, location: s.cfg.URL, nodeName: s.cfg.NodeName})
	if err != nil {
		err = invalidBody{err}
		s.badData, s.badErr = data, err
		return nil, err
	}
	s.data, s.pods, s.badData, s.badErr = data, pods, nil, nil
	return pods, nil
}

func (s *httpSource) get(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header = s.cfg.Header.Clone()
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := utilio.ReadAtMost(resp.Body, maxConfigLength)
	if errors.Is(err, utilio.ErrLimitReached) {
		return nil, fmt.Errorf("%s: body %w", s.cfg.URL, errTooLarge)
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", s.cfg.URL, resp.Status)
	}
	return data, nil
}

// parseURLManifests accepts a Pod or a PodList. One bad pod rejects the
// whole list, as on the kubelet: the last good snapshot then stays.
func parseURLManifests(data []byte, src staticSource) ([]*v1.Pod, error) {
	pod, podErr := decodePod(data)
	if podErr == nil {
		if err := prepareStaticPod(pod, src); err != nil {
			return nil, err
		}
		return []*v1.Pod{pod}, nil
	}
	list, listErr := decodePodList(data)
	if listErr != nil {
		if !errors.Is(podErr, errNotAPod) {
			return nil, fmt.Errorf("couldn't parse as a pod (%v) or a pod list (%v)", podErr, listErr)
		}
		return nil, listErr
	}
	pods := make([]*v1.Pod, 0, len(list.Items))
	for i := range list.Items {
		p := &list.Items[i]
		if err := prepareStaticPod(p, src); err != nil {
			return nil, fmt.Errorf("pod %d (%q) of the list: %w", i, p.Name, err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}
