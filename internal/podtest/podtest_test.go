package podtest

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewSetsOnlyWhatOptionsSay(t *testing.T) {
	if got, want := New("p"), (&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}); !reflect.DeepEqual(got, want) {
		t.Fatalf("New(p) = %+v; want only the name", got)
	}
	grace, prio := int64(1), int32(7)
	req := v1.ResourceRequirements{Requests: v1.ResourceList{}}
	got := New("p", Namespace("ns"), UID("u"), Labels(map[string]string{"l": "1"}),
		Annotations(map[string]string{"a": "1"}), NodeName("n"),
		Containers(v1.Container{Name: "c"}), InitContainers(v1.Container{Name: "i"}),
		Volumes(v1.Volume{Name: "v"}), RestartPolicy(v1.RestartPolicyNever), Priority(prio),
		Resources(req), GracePeriod(grace), ServiceAccount("sa"))
	want := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u",
			Labels: map[string]string{"l": "1"}, Annotations: map[string]string{"a": "1"}},
		Spec: v1.PodSpec{NodeName: "n", Containers: []v1.Container{{Name: "c"}},
			InitContainers: []v1.Container{{Name: "i"}}, Volumes: []v1.Volume{{Name: "v"}},
			RestartPolicy: v1.RestartPolicyNever, Priority: &prio, Resources: &req,
			TerminationGracePeriodSeconds: &grace, ServiceAccountName: "sa"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("New = %+v\nwant %+v", got, want)
	}
}
