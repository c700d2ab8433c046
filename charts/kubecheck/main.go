// Command kubecheck decodes every document of rendered Kubernetes manifests into the typed objects of
// k8s.io/api (and the Gateway API's HTTPRoute), refusing unknown fields (a misspelt key that helm lint lets
// through). It checks that each workload's selector matches its pod labels, that its probes name declared
// container ports and its mounts declared volumes, that JSON files in ConfigMaps parse, and, across the
// documents of one file, that every Ingress and HTTPRoute backend is a rendered Service port and that every
// NetworkPolicy selects rendered pods and names their ports. Decoding checks the shape only: the API server's
// own validation (CEL rules, required lists) is not run here.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
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
		var objs []any
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			obj, err := check(doc)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: document %d: %v\n", path, i, err)
				fails++
			}
			if obj != nil {
				objs = append(objs, obj)
			}
		}
		for _, err := range crossCheck(objs) {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			fails++
		}
	}
	if fails > 0 {
		os.Exit(1)
	}
}

// check decodes one document and checks it alone; it returns the object for crossCheck (nil for none).
func check(doc []byte) (any, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case " ":
		return nil, nil // empty document (comments only)
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
	case "v1 Pod":
		obj = &corev1.Pod{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "networking.k8s.io/v1 Ingress":
		obj = &networkingv1.Ingress{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "gateway.networking.k8s.io/v1 HTTPRoute":
		obj = &gatewayv1.HTTPRoute{}
	case "monitoring.coreos.com/v1 ServiceMonitor", "monitoring.coreos.com/v1 PrometheusRule":
		return nil, nil // CRDs: no types here
	default:
		return nil, fmt.Errorf("unexpected %s %s", meta.APIVersion, meta.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", meta.Kind, err)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return obj, workload(o.Name, o.Spec.Selector, &o.Spec.Template, nil)
	case *appsv1.StatefulSet:
		claims := make([]string, len(o.Spec.VolumeClaimTemplates))
		for i, c := range o.Spec.VolumeClaimTemplates {
			claims[i] = c.Name
		}
		return obj, workload(o.Name, o.Spec.Selector, &o.Spec.Template, claims)
	case *corev1.Pod:
		// A bare Pod (the helm test hook) answers to the same rules as the workloads' templates.
		return obj, workload(o.Name, &metav1.LabelSelector{MatchLabels: o.Labels}, &corev1.PodTemplateSpec{ObjectMeta: o.ObjectMeta, Spec: o.Spec}, nil)
	case *corev1.ConfigMap:
		// A dashboard or any other JSON file: the API server takes any text, Grafana refuses it at load.
		for k, v := range o.Data {
			if strings.HasSuffix(k, ".json") && !json.Valid([]byte(v)) {
				return obj, fmt.Errorf("ConfigMap %s: %s is not valid JSON", o.Name, k)
			}
		}
	case *gatewayv1.HTTPRoute:
		// The API server refuses neither an empty list here: such a route attaches to no Gateway.
		if len(o.Spec.ParentRefs) == 0 {
			return obj, fmt.Errorf("HTTPRoute %s: no parentRefs", o.Name)
		}
	}
	return obj, nil
}

// workload checks a pod template; claims are the names of a StatefulSet's volumeClaimTemplates, which its
// containers mount like the pod's volumes.
func workload(name string, sel *metav1.LabelSelector, t *corev1.PodTemplateSpec, claims []string) error {
	if sel == nil {
		return fmt.Errorf("%s: no selector", name)
	}
	for k, v := range sel.MatchLabels {
		if t.Labels[k] != v {
			return fmt.Errorf("%s: selector %s=%s does not match the pod labels", name, k, v)
		}
	}
	// The API server refuses a pod whose volumes share a name or whose container mounts a volume it lacks or
	// two volumes at one path (an extraVolumes entry named like one of the chart's, a mount without its volume).
	volumes := map[string]bool{}
	for _, c := range claims {
		volumes[c] = true
	}
	for _, v := range t.Spec.Volumes {
		if volumes[v.Name] {
			return fmt.Errorf("%s: two volumes named %q", name, v.Name)
		}
		volumes[v.Name] = true
	}
	for _, c := range t.Spec.Containers {
		paths := map[string]bool{}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				return fmt.Errorf("%s: container %s mounts volume %q, which the pod lacks", name, c.Name, m.Name)
			}
			if paths[m.MountPath] {
				return fmt.Errorf("%s: container %s mounts two volumes at %s", name, c.Name, m.MountPath)
			}
			paths[m.MountPath] = true
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

// crossCheck checks the references between the objects of one rendering: a backend that names no rendered
// Service port, or a NetworkPolicy that selects no rendered pod, is accepted by the API server and fails only
// at run time (no route, or a policy that protects nothing).
func crossCheck(objs []any) []error {
	var errs []error
	services := map[string]*corev1.Service{}
	var pods []*corev1.PodTemplateSpec
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Service:
			services[o.Name] = o
		case *appsv1.Deployment:
			pods = append(pods, &o.Spec.Template)
		case *appsv1.StatefulSet:
			pods = append(pods, &o.Spec.Template)
		}
	}
	servicePort := func(kind, name, svc string, port networkingv1.ServiceBackendPort) {
		s, ok := services[svc]
		if !ok {
			errs = append(errs, fmt.Errorf("%s %s: backend Service %q is not rendered", kind, name, svc))
			return
		}
		for _, p := range s.Spec.Ports {
			if (port.Name != "" && p.Name == port.Name) || (port.Name == "" && p.Port == port.Number) {
				return
			}
		}
		errs = append(errs, fmt.Errorf("%s %s: Service %s has no port %s", kind, name, svc, portString(port)))
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *networkingv1.Ingress:
			if b := o.Spec.DefaultBackend; b != nil && b.Service != nil {
				servicePort("Ingress", o.Name, b.Service.Name, b.Service.Port)
			}
			for _, r := range o.Spec.Rules {
				if r.HTTP == nil {
					continue
				}
				for _, p := range r.HTTP.Paths {
					if p.Backend.Service == nil {
						errs = append(errs, fmt.Errorf("%s %s: path %s has no Service backend", "Ingress", o.Name, p.Path))
						continue
					}
					servicePort("Ingress", o.Name, p.Backend.Service.Name, p.Backend.Service.Port)
				}
			}
		case *gatewayv1.HTTPRoute:
			for _, r := range o.Spec.Rules {
				for _, b := range r.BackendRefs {
					if (b.Kind != nil && *b.Kind != "Service") || b.Port == nil {
						errs = append(errs, fmt.Errorf("HTTPRoute %s: backend %s is not a Service port", o.Name, b.Name))
						continue
					}
					servicePort("HTTPRoute", o.Name, string(b.Name), networkingv1.ServiceBackendPort{Number: *b.Port})
				}
			}
		case *networkingv1.NetworkPolicy:
			errs = append(errs, networkPolicy(o, pods)...)
		}
	}
	return errs
}

// networkPolicy checks that np selects at least one rendered pod template and that the named ports of its
// ingress rules are container ports of every pod it selects.
func networkPolicy(np *networkingv1.NetworkPolicy, pods []*corev1.PodTemplateSpec) []error {
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		return []error{fmt.Errorf("NetworkPolicy %s: %v", np.Name, err)}
	}
	var errs []error
	selected := 0
	for _, t := range pods {
		if !sel.Matches(labels.Set(t.Labels)) {
			continue
		}
		selected++
		names := map[string]bool{}
		for _, c := range t.Spec.Containers {
			for _, p := range c.Ports {
				names[p.Name] = true
			}
		}
		for _, r := range np.Spec.Ingress {
			for _, p := range r.Ports {
				if p.Port != nil && p.Port.StrVal != "" && !names[p.Port.StrVal] {
					errs = append(errs, fmt.Errorf("NetworkPolicy %s: port %q is not a container port of the pods it selects", np.Name, p.Port.StrVal))
				}
			}
		}
	}
	if selected == 0 || sel.Empty() {
		errs = append(errs, fmt.Errorf("NetworkPolicy %s: selects none (or every pod) of the rendered workloads", np.Name))
	}
	return errs
}

func portString(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprint(p.Number)
}
