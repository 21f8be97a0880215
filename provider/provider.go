// Package provider is the virtual-kubelet edge and nothing else: the
// framework's pod calls become the api source's updates, and its reads are
// answered from the api source and the status manager. Statuses do not go
// through the framework: the status manager writes them (internal/status).
// The kubelet API's paths are internal/streaming's.
package provider

import (
	"context"
	"errors"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
)

// Config wires the provider.
type Config struct {
	// Source is the api pod-config source.
	Source *apisource.Source
	Status *status.Manager
}

// Provider implements the framework's pod lifecycle and notifier interfaces.
type Provider struct {
	cfg Config
}

// New returns a provider.
func New(cfg Config) *Provider { return &Provider{cfg: cfg} }

// CreatePod hands a new pod to the api source.
func (p *Provider) CreatePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.CreatePod", pod)
	defer span.End()
	telemetry.RememberPodTrace(pod.UID, span)
	p.cfg.Source.Add(pod)
	return nil
}

// UpdatePod hands a changed pod to the api source.
func (p *Provider) UpdatePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.UpdatePod", pod)
	defer span.End()
	telemetry.RememberPodTrace(pod.UID, span)
	p.cfg.Source.Add(pod)
	return nil
}

// DeletePod starts a graceful delete in the api source.
func (p *Provider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.DeletePod", pod)
	defer span.End()
	telemetry.RememberPodTrace(pod.UID, span)
	if err := p.cfg.Source.Delete(pod); errors.Is(err, apisource.ErrNotFound) {
		return errdefs.NotFoundf("pod %s/%s is not known to runlet", pod.Namespace, pod.Name)
	} else if err != nil {
		return err
	}
	return nil
}

// GetPod returns the pod with its newest status.
func (p *Provider) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	pod, ok := p.cfg.Source.Get(namespace, name)
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s is not known to runlet", namespace, name)
	}
	return p.cfg.Status.WithStatus(pod), nil
}

// GetPodStatus returns the pod's newest status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*v1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods returns the pods the api source holds. Static pods are not listed:
// the framework would delete them as unknown to the API.
func (p *Provider) GetPods(ctx context.Context) ([]*v1.Pod, error) {
	pods := p.cfg.Source.Pods()
	for _, pod := range pods {
		p.cfg.Status.WithStatus(pod)
	}
	return pods, nil
}

// NotifyPods never calls back. The framework wants a notifier, or it polls
// GetPodStatus every 5 s and writes what it gets with a whole-object update;
// runlet's status manager writes every status itself, as a patch that
// keeps what others own, to API pods and mirror pods alike.
func (p *Provider) NotifyPods(context.Context, func(*v1.Pod)) {}
