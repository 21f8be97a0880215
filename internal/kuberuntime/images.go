package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/images"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
)

// ensureImage makes the container's image present as the kubelet's image
// manager does (pkg/kubelet/images/image_manager.go): the pull policy, the
// image back-off (ErrImagePull, then ImagePullBackOff), the pod's pull
// secrets as credentials, and its events with the kubelet's words. The pull
// runs in the shared puller, and the pod gives up its start turn while it
// waits, so a slow pull never holds back the starts of other pods.
func (m *Manager) ensureImage(ctx context.Context, pod *v1.Pod, c *v1.Container) (Result, error) {
	if err := images.ValidName(c.Image); err != nil {
		msg := fmt.Sprintf("Failed to apply default image tag %q: %v", c.Image, err)
		m.event(pod, v1.EventTypeWarning, "InspectFailed", "%s", msg)
		return m.imageError(pod, c, "InvalidImageName", msg, err)
	}
	policy := pullPolicy(c)
	if policy != runtime.PullAlways {
		_, err := m.rt.EnsureImage(ctx, c.Image, runtime.PullNever, nil)
		switch {
		case err == nil:
			m.event(pod, v1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			return Result{}, nil
		case !errors.Is(err, runtime.ErrImageNotFound):
			msg := fmt.Sprintf("Failed to inspect image %q: %v", c.Image, err)
			m.event(pod, v1.EventTypeWarning, "InspectFailed", "%s", msg)
			return m.imageError(pod, c, "ImageInspectError", msg, err)
		case policy == runtime.PullNever:
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image)
			m.event(pod, v1.EventTypeWarning, "ErrImageNeverPull", "%s", msg)
			return m.imageError(pod, c, "ErrImageNeverPull", msg, err)
		}
	}
	key := string(pod.UID) + "_" + c.Image
	if m.imageBackoff.IsInBackOffSinceUpdate(key, time.Now()) {
		msg := fmt.Sprintf("Back-off pulling image %q", c.Image)
		m.event(pod, v1.EventTypeNormal, "BackOff", "%s", msg)
		if prev, ok := m.pullErrors.Load(key); ok {
			msg = fmt.Sprintf("%s: %s", msg, prev)
		}
		res, _ := m.imageError(pod, c, "ImagePullBackOff", msg, nil)
		res.RequeueAfter = time.Second
		return res, fmt.Errorf("%w: %s", ErrBackOff, msg)
	}
	m.pullErrors.Delete(key)
	return m.pull(ctx, pod, c, key)
}

// ensureImageVolumes pulls the images of the image volumes the container
// mounts, as its own image: the pod's pull secrets, the volume's pull
// policy, the same back-off; a failure keeps the container waiting with
// ErrImagePull or ImagePullBackOff.
func (m *Manager) ensureImageVolumes(ctx context.Context, pod *v1.Pod, c *v1.Container) (Result, error) {
	for _, vm := range c.VolumeMounts {
		for i := range pod.Spec.Volumes {
			img := pod.Spec.Volumes[i].Image
			if pod.Spec.Volumes[i].Name != vm.Name || img == nil {
				continue
			}
			if res, err := m.ensureImage(ctx, pod, &v1.Container{Name: c.Name, Image: img.Reference, ImagePullPolicy: img.PullPolicy}); err != nil {
				return res, err
			}
		}
	}
	return Result{}, nil
}

// pull pulls the image with the pod's credentials and reports it.
func (m *Manager) pull(ctx context.Context, pod *v1.Pod, c *v1.Container, key string) (Result, error) {
	secrets, missing := images.PullSecrets(pod, m.secrets)
	if len(missing) > 0 {
		m.log.WithField("pod", pod.Namespace+"/"+pod.Name).WithField("secrets", missing).
			Info("Unable to retrieve pull secret, the image pull may not succeed.")
	}
	creds, err := images.Credentials(c.Image, secrets)
	if err == nil {
		m.event(pod, v1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
		start := time.Now()
		var pulled images.Pull
		pulled, err = m.pullWithoutTurn(ctx, c.Image, creds)
		if err == nil {
			waited := time.Since(start).Truncate(time.Millisecond)
			m.event(pod, v1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %v (%v including waiting). Image size: %v bytes.",
				c.Image, pulled.Took.Truncate(time.Millisecond), waited, m.imageSize(ctx, c.Image))
			return Result{}, nil
		}
		if ctx.Err() != nil {
			return Result{}, err // the pod is going away: no failure to report
		}
		m.event(pod, v1.EventTypeWarning, "Failed", "Failed to pull image %q: %v", c.Image, err)
	}
	if len(missing) > 0 {
		// A missing pull secret may be why the pull failed: the kubelet says so.
		m.event(pod, v1.EventTypeWarning, "FailedToRetrieveImagePullSecret",
			"Unable to retrieve some image pull secrets (%s); attempting to pull the image may not succeed.", strings.Join(missing, ", "))
	}
	m.imageBackoff.Next(key, time.Now())
	m.pullErrors.Store(key, "ErrImagePull: "+err.Error())
	res, _ := m.imageError(pod, c, "ErrImagePull", err.Error(), err)
	res.RequeueAfter = time.Second
	return res, fmt.Errorf("image %s: %w", c.Image, err)
}

// pullWithoutTurn waits for the pull with the pod's start turn given up.
func (m *Manager) pullWithoutTurn(ctx context.Context, image string, creds []runtime.Credential) (images.Pull, error) {
	turn := turnFrom(ctx)
	turn.pause()
	pulled, err := m.puller.Pull(ctx, image, creds)
	if rerr := turn.resume(ctx); rerr != nil && err == nil {
		err = rerr
	}
	return pulled, err
}

// imageError records why the container waits for its image, with the
// kubelet's "Error: <reason>" event.
func (m *Manager) imageError(pod *v1.Pod, c *v1.Container, reason, msg string, err error) (Result, error) {
	m.setWaiting(string(pod.UID), c.Name, &status.Waiting{Reason: reason, Message: msg})
	m.event(pod, v1.EventTypeWarning, "Failed", "Error: %s", reason)
	if err == nil {
		err = errors.New(msg)
	}
	return Result{}, fmt.Errorf("image %s: %s: %w", c.Image, reason, err)
}

func (m *Manager) imageSize(ctx context.Context, image string) uint64 {
	if !m.caps.ImageSize {
		return 0
	}
	size, err := m.rt.ImageSize(ctx, image)
	if err != nil {
		m.log.WithError(err).WithField("image", image).Debug("image size unknown")
	}
	return size
}

// pullPolicy is the container's pull policy (defaulted as the API server
// does when it is unset). Images named localhost/... are this machine's own
// (built or loaded here, the podman convention): there is nothing to pull
// them from, so Always looks for them as IfNotPresent does.
func pullPolicy(c *v1.Container) runtime.PullPolicy {
	switch c.ImagePullPolicy {
	case v1.PullAlways:
		if strings.HasPrefix(c.Image, "localhost/") {
			return runtime.PullIfNotPresent
		}
		return runtime.PullAlways
	case v1.PullNever:
		return runtime.PullNever
	case v1.PullIfNotPresent:
		return runtime.PullIfNotPresent
	}
	if strings.HasSuffix(c.Image, ":latest") || !strings.Contains(lastSegment(c.Image), ":") {
		if strings.HasPrefix(c.Image, "localhost/") {
			return runtime.PullIfNotPresent
		}
		return runtime.PullAlways
	}
	return runtime.PullIfNotPresent
}

func lastSegment(image string) string {
	if i := strings.LastIndex(image, "/"); i >= 0 {
		return image[i+1:]
	}
	return image
}
