package node

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-helpers/nodedeclaredfeatures"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures/types"
)

// TestDeclaredFeatures: the node declares what runlet does, so that a pod
// or a pod update that needs it gets through, as the scheduler and the
// apiserver's NodeDeclaredFeatureValidator match them.
func TestDeclaredFeatures(t *testing.T) {
	declared := DeclaredFeatures("v1.37.2-runlet-0.1.0")
	want := []string{"InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScalingInitContainers", "RestartAllContainersOnContainerExits"}
	if !slices.Equal(declared, want) {
		t.Fatalf("declared %v; want %v", declared, want)
	}
	node := &v1.Node{Status: v1.NodeStatus{DeclaredFeatures: declared}}
	fw := nodedeclaredfeatures.DefaultFramework
	at := version.MustParseSemantic("v1.37.2")

	plrOld := v1.PodSpec{Resources: &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}, Containers: []v1.Container{{Name: "c"}}}
	plrNew := *plrOld.DeepCopy()
	plrNew.Resources.Limits[v1.ResourceCPU] = resource.MustParse("2")
	reqs, err := fw.InferForPodUpdate(&ndf.PodInfo{Spec: &plrOld}, &ndf.PodInfo{Spec: &plrNew}, at)
	if err != nil {
		t.Fatal(err)
	}
	if reqs.IsEmpty() {
		t.Fatal("resizing pod-level resources needs no declared feature; the test no longer checks what it should")
	}
	if m, _ := fw.MatchNode(reqs, node); !m.IsMatch {
		t.Errorf("a resize of pod-level resources is refused: unsatisfied %v", m.UnsatisfiedRequirements)
	}

	restartAll := v1.PodSpec{Containers: []v1.Container{{Name: "c", RestartPolicyRules: []v1.ContainerRestartRule{{
		Action: v1.ContainerRestartRuleActionRestartAllContainers,
	}}}}}
	reqs, err = fw.InferForPodScheduling(&ndf.PodInfo{Spec: &restartAll}, at)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := fw.MatchNode(reqs, node); !m.IsMatch {
		t.Errorf("a pod with a RestartAllContainers rule is kept off the node: unsatisfied %v", m.UnsatisfiedRequirements)
	}

	initOld := v1.PodSpec{InitContainers: []v1.Container{{Name: "i", Resources: limitsOf("100m")}}, Containers: []v1.Container{{Name: "c"}}}
	initNew := *initOld.DeepCopy()
	initNew.InitContainers[0].Resources = limitsOf("200m")
	reqs, err = fw.InferForPodUpdate(&ndf.PodInfo{Spec: &initOld}, &ndf.PodInfo{Spec: &initNew}, at)
	if err != nil {
		t.Fatal(err)
	}
	if reqs.IsEmpty() {
		t.Fatal("resizing an init container needs no declared feature; the test no longer checks what it should")
	}
	if m, _ := fw.MatchNode(reqs, node); !m.IsMatch {
		t.Errorf("an init container's resize is refused: unsatisfied %v", m.UnsatisfiedRequirements)
	}
}

func limitsOf(cpu string) v1.ResourceRequirements {
	return v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}
}
