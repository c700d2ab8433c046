// Command kubecheck decodes every document of rendered Kubernetes manifests into the typed objects of
// k8s.io/api, refusing unknown fields (a misspelt key that helm lint lets through), and checks that each
// workload's selector matches its pod labels and that its probes name declared container ports.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	fails := 0
	for _, path := range os.Args[1:] {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			if err := check(doc); err != nil {
				fmt.Fprintf(os.Stderr, "%s: document %d: %v\n", path, i, err)
				fails++
			}
		}
	}
	if fails > 0 {
		os.Exit(1)
	}
}

func check(doc []byte) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case " ":
		return nil // empty document (comments only)
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "apps/v1 StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "monitoring.coreos.com/v1 ServiceMonitor", "monitoring.coreos.com/v1 PrometheusRule":
		return nil // CRDs: no types here
	default:
		return fmt.Errorf("unexpected %s %s", meta.APIVersion, meta.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return fmt.Errorf("%s: %w", meta.Kind, err)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return workload(o.Name, o.Spec.Selector, &o.Spec.Template)
	case *appsv1.StatefulSet:
		return workload(o.Name, o.Spec.Selector, &o.Spec.Template)
	}
	return nil
}

func workload(name string, sel *metav1.LabelSelector, t *corev1.PodTemplateSpec) error {
	if sel == nil {
		return fmt.Errorf("%s: no selector", name)
	}
	for k, v := range sel.MatchLabels {
		if t.Labels[k] != v {
			return fmt.Errorf("%s: selector %s=%s does not match the pod labels", name, k, v)
		}
	}
	for _, c := range t.Spec.Containers {
		ports := map[string]bool{}
		for _, p := range c.Ports {
			if len(p.Name) > 15 {
				return fmt.Errorf("%s: port name %q longer than 15", name, p.Name)
			}
			ports[p.Name] = true
		}
		for _, pr := range []*corev1.Probe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
			if pr == nil || pr.HTTPGet == nil {
				continue
			}
			if p := pr.HTTPGet.Port.StrVal; p != "" && !ports[p] {
				return fmt.Errorf("%s: probe names port %q, not declared", name, p)
			}
			if !strings.HasPrefix(pr.HTTPGet.Path, "/") {
				return fmt.Errorf("%s: probe path %q", name, pr.HTTPGet.Path)
			}
		}
		if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			return fmt.Errorf("%s: container %s without a read-only root filesystem", name, c.Name)
		}
	}
	if sc := t.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return fmt.Errorf("%s: pod may run as root", name)
	}
	return nil
}
