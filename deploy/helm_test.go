package deploy_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

const chartDir = "helm/reliar-relay"

// configValues is what a user gives at least: the relay's configuration.
func configValues() map[string]any {
	return map[string]any{"config": map[string]any{"file": map[string]any{
		"database-url": "postgres://relay@db:5432/shop",
		"relay":        map[string]any{"broker": "nats://nats:4222", "subject-prefix": "orders"},
	}}}
}

// withServiceMonitor adds the ServiceMonitor to v.
func withServiceMonitor(v map[string]any) map[string]any {
	v["metrics"] = map[string]any{"serviceMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "kube-prometheus"}}}
	return v
}

// TestHelmLint: helm lint, strict (a warning fails too), with the values a
// user gives and with the ServiceMonitor on.
func TestHelmLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"config":         configValues(),
		"servicemonitor": withServiceMonitor(configValues()),
	} {
		t.Run(name, func(t *testing.T) {
			l := lint.All(chartDir, vals, "outbox", false)
			for _, m := range l.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m)
				}
			}
		})
	}
}

// render is `helm template` of the chart with vals.
func render(t *testing.T, vals map[string]any) (string, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	inst := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	inst.DryRun, inst.ClientOnly, inst.Replace = true, true, true
	inst.ReleaseName, inst.Namespace = "reliar-relay", "outbox"
	// helm template --kube-version 1.31: the chart needs 1.27 or later
	// (unhealthyPodEvictionPolicy), and Helm assumes 1.20 otherwise.
	kv, err := chartutil.ParseKubeVersion("1.31.0")
	if err != nil {
		t.Fatal(err)
	}
	inst.KubeVersion = kv
	rel, err := inst.Run(chrt, vals)
	if err != nil {
		return "", err
	}
	return rel.Manifest, nil
}

// manifests are the rendered objects, decoded strictly into their API
// types: a field the type does not have fails the test.
type manifests struct {
	deployment     *appsv1.Deployment
	service        *corev1.Service
	secret         *corev1.Secret
	serviceAccount *corev1.ServiceAccount
	pdb            *policyv1.PodDisruptionBudget
	serviceMonitor *monitoringv1.ServiceMonitor
}

var docSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func decode(t *testing.T, manifest string) manifests {
	t.Helper()
	var m manifests
	for _, doc := range docSeparator.Split(manifest, -1) {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		var into any
		var want string
		switch head.Kind {
		case "Deployment":
			m.deployment, want = &appsv1.Deployment{}, "apps/v1"
			into = m.deployment
		case "Service":
			m.service, want = &corev1.Service{}, "v1"
			into = m.service
		case "Secret":
			m.secret, want = &corev1.Secret{}, "v1"
			into = m.secret
		case "ServiceAccount":
			m.serviceAccount, want = &corev1.ServiceAccount{}, "v1"
			into = m.serviceAccount
		case "PodDisruptionBudget":
			m.pdb, want = &policyv1.PodDisruptionBudget{}, "policy/v1"
			into = m.pdb
		case "ServiceMonitor":
			m.serviceMonitor, want = &monitoringv1.ServiceMonitor{}, "monitoring.coreos.com/v1"
			into = m.serviceMonitor
		default:
			t.Fatalf("the chart renders a %s %s this test does not know", head.APIVersion, head.Kind)
		}
		if head.APIVersion != want {
			t.Fatalf("%s has apiVersion %s, want %s", head.Kind, head.APIVersion, want)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s does not decode strictly: %v\n%s", head.Kind, err, doc)
		}
	}
	return m
}

// TestHelmTemplate renders the chart as a user would, decodes every object
// strictly, and checks what running the relay needs.
func TestHelmTemplate(t *testing.T) {
	out, err := render(t, withServiceMonitor(configValues()))
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	if m.deployment == nil || m.service == nil || m.secret == nil || m.serviceAccount == nil || m.pdb == nil || m.serviceMonitor == nil {
		t.Fatalf("missing objects: %+v", m)
	}

	d := m.deployment
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Fatalf("replicas %v, want more than one", d.Spec.Replicas)
	}
	pod := d.Spec.Template
	for k, v := range d.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Fatalf("the selector %v does not match the pod's labels %v", d.Spec.Selector.MatchLabels, pod.Labels)
		}
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	if !slices.Equal(c.Args[:3], []string{"relay", "--metrics-addr", ":9090"}) {
		t.Fatalf("args %v", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9090 {
		t.Fatalf("ports %+v, want metrics on 9090", c.Ports)
	}
	probe := func(what string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s probe %+v, want GET %s on the metrics port", what, p, path)
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	if got := c.Resources.Requests[corev1.ResourceMemory]; got.Cmp(resource.MustParse("64Mi")) != 0 {
		t.Errorf("memory request %s, want 64Mi (BENCHMARKS.md: 43.2 MiB peak RSS)", got.String())
	}
	if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot ||
		pod.Spec.SecurityContext.RunAsUser == nil || *pod.Spec.SecurityContext.RunAsUser != 65532 {
		t.Errorf("pod security context %+v, want non-root user 65532", pod.Spec.SecurityContext)
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("container security context %+v, want a read-only root filesystem", c.SecurityContext)
	}

	// The configuration comes from the Secret, mounted where RELIAR_CONFIG
	// points.
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["RELIAR_CONFIG"] != "/etc/reliar/config.yaml" {
		t.Errorf("RELIAR_CONFIG = %q", env["RELIAR_CONFIG"])
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Secret == nil || pod.Spec.Volumes[0].Secret.SecretName != m.secret.Name {
		t.Fatalf("volumes %+v, want the Secret %s", pod.Spec.Volumes, m.secret.Name)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/reliar" || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("volume mounts %+v", c.VolumeMounts)
	}
	var file struct {
		DatabaseURL string         `json:"database-url"`
		Relay       map[string]any `json:"relay"`
	}
	if err := yaml.UnmarshalStrict([]byte(m.secret.StringData["config.yaml"]), &file); err != nil {
		t.Fatalf("the Secret's config.yaml: %v", err)
	}
	if file.DatabaseURL != "postgres://relay@db:5432/shop" || file.Relay["broker"] != "nats://nats:4222" {
		t.Errorf("the Secret's config.yaml = %+v", file)
	}
	if pod.Annotations["checksum/config"] == "" {
		t.Error("no checksum/config annotation: a changed configuration would not roll the relays")
	}

	pdb := m.pdb
	if pdb.Spec.UnhealthyPodEvictionPolicy == nil || *pdb.Spec.UnhealthyPodEvictionPolicy != policyv1.AlwaysAllow {
		t.Errorf("PDB unhealthyPodEvictionPolicy %v, want AlwaysAllow", pdb.Spec.UnhealthyPodEvictionPolicy)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PDB maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
	}
	if fmt.Sprint(pdb.Spec.Selector.MatchLabels) != fmt.Sprint(d.Spec.Selector.MatchLabels) {
		t.Errorf("PDB selector %v, Deployment's %v", pdb.Spec.Selector.MatchLabels, d.Spec.Selector.MatchLabels)
	}

	if len(m.service.Spec.Ports) != 1 || m.service.Spec.Ports[0].Name != "metrics" {
		t.Errorf("service ports %+v", m.service.Spec.Ports)
	}
	sm := m.serviceMonitor
	if sm.Spec.JobLabel != "app.kubernetes.io/name" || m.service.Labels["app.kubernetes.io/name"] != "reliar-relay" {
		t.Errorf("ServiceMonitor jobLabel %q over a Service named %q: the alert rules select job=\"reliar-relay\"",
			sm.Spec.JobLabel, m.service.Labels["app.kubernetes.io/name"])
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor endpoints %+v", sm.Spec.Endpoints)
	}
	if sm.Labels["release"] != "kube-prometheus" {
		t.Errorf("ServiceMonitor labels %v lack the values' labels", sm.Labels)
	}
}

// TestHelmTemplateExistingSecret: with config.existingSecret the chart
// makes no Secret, mounts that one, and the ServiceMonitor stays off by
// default.
func TestHelmTemplateExistingSecret(t *testing.T) {
	out, err := render(t, map[string]any{"config": map[string]any{"existingSecret": "relay-config"}})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	if m.secret != nil || m.serviceMonitor != nil {
		t.Fatalf("rendered a Secret (%v) or a ServiceMonitor (%v)", m.secret != nil, m.serviceMonitor != nil)
	}
	if got := m.deployment.Spec.Template.Spec.Volumes[0].Secret.SecretName; got != "relay-config" {
		t.Fatalf("the volume mounts Secret %q, want relay-config", got)
	}
}

// TestHelmTemplateNeedsConfig: without a configuration the chart refuses
// to render rather than start relays that exit at once.
func TestHelmTemplateNeedsConfig(t *testing.T) {
	_, err := render(t, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), "config.existingSecret is required") {
		t.Fatalf("render without a configuration = %v, want the chart's error", err)
	}
}
