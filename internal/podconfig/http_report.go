package podconfig

import (
	"errors"

	v1 "k8s.io/api/core/v1"
)

// errEmptyBody is the kubelet's word for an empty response, which removes
// the URL's static pods.
var errEmptyBody = errors.New("zero-length data received")

// invalidBody is a response that was read but holds no valid pods.
type invalidBody struct{ err error }

func (e invalidBody) Error() string { return e.err.Error() }
func (e invalidBody) Unwrap() error { return e.err }

// report logs the outcome of a poll and records a new problem on the node.
func (s *httpSource) report(err error) {
	log := s.cfg.Log.WithField("url", s.cfg.URL)
	if err == nil {
		if s.failures > 0 {
			log.Info("read static pods from URL again")
		}
		s.failures, s.reported = 0, ""
		return
	}
	s.failures++
	if err.Error() == s.reported {
		if s.failures <= 3 {
			log.WithError(err).Warn("failed to read static pods from URL; keeping the last good ones")
		} else {
			log.WithError(err).Debug("failed to read static pods from URL")
		}
		return
	}
	s.reported = err.Error()
	reason, msg := ReasonFailedManifestURL, "Static pods could not be read from %s, the last good ones are kept: %v"
	var invalid invalidBody
	switch {
	case errors.Is(err, errEmptyBody):
		reason, msg = ReasonInvalidManifest, "Static pods from %s removed: %v"
		log.WithError(err).Warn("no static pods at the URL")
	case errors.As(err, &invalid):
		reason, msg = ReasonInvalidManifest, "Static pods from %s ignored, the last good ones are kept: %v"
		log.WithError(err).Error("static pod manifests from URL ignored; keeping the last good ones")
	default:
		log.WithError(err).Warn("failed to read static pods from URL; keeping the last good ones")
	}
	if s.cfg.Recorder != nil {
		s.cfg.Recorder.Eventf(nodeRef(s.cfg.NodeName), v1.EventTypeWarning, reason, msg, s.cfg.URL, err)
	}
}
