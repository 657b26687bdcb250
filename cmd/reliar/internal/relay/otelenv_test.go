package relay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env is a lookup over a map, for readOTelEnv.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestReadOTelEnvPlan(t *testing.T) {
	t.Parallel()
	type sig struct{ protocol, endpoint string }
	tests := []struct {
		name            string
		vars            map[string]string
		traces, metrics *sig
	}{
		{"nothing set", nil, nil, nil},
		{"no endpoint", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_SERVICE_NAME": "x", "OTEL_METRIC_EXPORT_INTERVAL": "oops"}, nil, nil},
		{"endpoint, default protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
			&sig{"http/protobuf", "http://c:4318"}, &sig{"http/protobuf", "http://c:4318"}},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": " https://c:4317 ", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			&sig{"grpc", "https://c:4317"}, &sig{"grpc", "https://c:4317"}},
		{"per-signal endpoint and protocol win", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "bogus",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4317",
			"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:4318/v1/metrics",
		}, &sig{"grpc", "http://t:4317"}, &sig{"http/protobuf", "http://m:4318/v1/metrics"}},
		{"traces endpoint only", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/v1/traces"},
			&sig{"http/protobuf", "http://t:4318/v1/traces"}, nil},
		{"credentials left out of the logged endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://u:hunter2@c:4318/base?k=v"},
			&sig{"http/protobuf", "https://c:4318/base"}, &sig{"http/protobuf", "https://c:4318/base"}},
		{"traces exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none", "OTEL_TRACES_SAMPLER": "bogus"},
			nil, &sig{"http/protobuf", "http://c:4318"}},
		{"metrics exporter none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"},
			&sig{"http/protobuf", "http://c:4318"}, nil},
		{"metrics exporter prometheus", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "prometheus"},
			&sig{"http/protobuf", "http://c:4318"}, nil},
		{"metrics exporters otlp and prometheus", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "otlp, prometheus", "OTEL_TRACES_EXPORTER": "otlp"},
			&sig{"http/protobuf", "http://c:4318"}, &sig{"http/protobuf", "http://c:4318"}},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_PROTOCOL": "bogus"}, nil, nil},
		{"sdk not disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "false"},
			&sig{"http/protobuf", "http://c:4318"}, &sig{"http/protobuf", "http://c:4318"}},
		{"valid tuning", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "api-key=abc%3D, x-tenant = acme", "OTEL_EXPORTER_OTLP_INSECURE": "true",
			"OTEL_EXPORTER_OTLP_TIMEOUT": "500", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_METRIC_EXPORT_INTERVAL": "1000",
			"OTEL_BSP_SCHEDULE_DELAY": "0", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25",
		}, &sig{"http/protobuf", "http://c:4318"}, &sig{"http/protobuf", "http://c:4318"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan, err := readOTelEnv(env(tt.vars))
			if err != nil {
				t.Fatalf("readOTelEnv: %v", err)
			}
			for _, c := range []struct {
				name      string
				got       *otelSignal
				want      *sig
				wantLabel string
			}{{"traces", plan.traces, tt.traces, "traces"}, {"metrics", plan.metrics, tt.metrics, "metrics"}} {
				switch {
				case c.want == nil && c.got != nil:
					t.Errorf("%s exported (%+v), want not", c.name, *c.got)
				case c.want != nil && c.got == nil:
					t.Errorf("%s not exported, want %+v", c.name, *c.want)
				case c.want != nil && (c.got.protocol != c.want.protocol || c.got.endpoint != c.want.endpoint || c.got.name != c.wantLabel):
					t.Errorf("%s = %+v, want %+v", c.name, *c.got, *c.want)
				}
			}
		})
	}
}

func TestReadOTelEnvRefusesBadValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	const ep = "OTEL_EXPORTER_OTLP_ENDPOINT"
	tests := []struct {
		name string
		vars map[string]string
		want string // the variable named
	}{
		{"protocol", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"traces protocol", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "GRPC"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{"no scheme", map[string]string{ep: "c:4317"}, ep},
		{"other scheme", map[string]string{ep: "ftp://c:4317"}, ep},
		{"no host", map[string]string{ep: "http:///v1"}, ep},
		{"unparsable", map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:43 17"}, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"},
		{"port out of range", map[string]string{ep: "http://c:0"}, ep},
		{"traces exporter", map[string]string{ep: "http://c:4318", "OTEL_TRACES_EXPORTER": "console"}, "OTEL_TRACES_EXPORTER"},
		{"traces exporter prometheus", map[string]string{ep: "http://c:4318", "OTEL_TRACES_EXPORTER": "prometheus"}, "OTEL_TRACES_EXPORTER"},
		{"none with another", map[string]string{ep: "http://c:4318", "OTEL_METRICS_EXPORTER": "none,otlp"}, "OTEL_METRICS_EXPORTER"},
		{"sdk disabled", map[string]string{ep: "http://c:4318", "OTEL_SDK_DISABLED": "1"}, "OTEL_SDK_DISABLED"},
		{"insecure", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_METRICS_INSECURE": "yes"}, "OTEL_EXPORTER_OTLP_METRICS_INSECURE"},
		{"headers without =", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,b"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{"header name", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a b=1"}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"},
		{"header encoding", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=%zz"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{"timeout", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{"compression", map[string]string{ep: "http://c:4318", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{"metric interval", map[string]string{ep: "http://c:4318", "OTEL_METRIC_EXPORT_INTERVAL": "1m"}, "OTEL_METRIC_EXPORT_INTERVAL"},
		{"metric timeout", map[string]string{ep: "http://c:4318", "OTEL_METRIC_EXPORT_TIMEOUT": "-5"}, "OTEL_METRIC_EXPORT_TIMEOUT"},
		{"span delay", map[string]string{ep: "http://c:4318", "OTEL_BSP_SCHEDULE_DELAY": "fast"}, "OTEL_BSP_SCHEDULE_DELAY"},
		{"span queue", map[string]string{ep: "http://c:4318", "OTEL_BSP_MAX_QUEUE_SIZE": "1e3"}, "OTEL_BSP_MAX_QUEUE_SIZE"},
		{"sampler", map[string]string{ep: "http://c:4318", "OTEL_TRACES_SAMPLER": "jaeger_remote"}, "OTEL_TRACES_SAMPLER"},
		{"sampler ratio", map[string]string{ep: "http://c:4318", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"}, "OTEL_TRACES_SAMPLER_ARG"},
		{"missing certificate", map[string]string{ep: "https://c:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "none.pem")}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{"not a certificate", map[string]string{ep: "https://c:4318", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": notPEM}, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"},
		{"client key without certificate", map[string]string{ep: "https://c:4318", "OTEL_EXPORTER_OTLP_CLIENT_KEY": notPEM}, "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan, err := readOTelEnv(env(tt.vars))
			var envErr *EnvError
			if !errors.As(err, &envErr) || envErr.Var != tt.want || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("readOTelEnv = %+v, %v; want an *EnvError about %s matching ErrInvalidConfig", plan, err, tt.want)
			}
		})
	}
}

// TestReadOTelEnvKeepsHeaderValuesSecret: a bad headers variable is named,
// its values are not shown.
func TestReadOTelEnvKeepsHeaderValuesSecret(t *testing.T) {
	t.Parallel()
	_, err := readOTelEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
		"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=Bearer%20hunter2,x-key=%zzhunter2",
	}))
	if err == nil {
		t.Fatal("readOTelEnv accepted a bad header")
	}
	if msg := err.Error(); !strings.Contains(msg, "OTEL_EXPORTER_OTLP_HEADERS") || strings.Contains(msg, "hunter2") {
		t.Fatalf("error %q, want the variable named and no value shown", msg)
	}
}
