package syncloop

import (
	"strings"

	"github.com/runlet/runlet/internal/kuberuntime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// warnUnsupported tells, with a Warning event, which fields of the pod runlet
// does not honour yet: all of them for a new pod (old nil), and those an
// update brings (an ephemeral container added by kubectl debug) for a pod
// that runs, so that no field is ignored silently.
func (l *Loop) warnUnsupported(old, p *v1.Pod) {
	if l.cfg.Recorder == nil {
		return
	}
	fields := kuberuntime.Unsupported(p)
	if old != nil {
		known := sets.New(kuberuntime.Unsupported(old)...)
		fields = sets.List(sets.New(fields...).Difference(known))
	}
	if len(fields) > 0 {
		l.cfg.Recorder.Eventf(p, v1.EventTypeWarning, "UnsupportedField",
			"runlet does not implement %s yet: the pod runs without them", strings.Join(fields, ", "))
	}
}
