package relay

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// The OTLP protocols the relay exports with.
const (
	protocolGRPC         = "grpc"
	protocolHTTPProtobuf = "http/protobuf"
)

// otelSignal is how one signal (traces or metrics) is exported, as the
// OTEL_* variables say.
type otelSignal struct {
	// name is "traces" or "metrics".
	name string
	// protocol is protocolGRPC or protocolHTTPProtobuf.
	protocol string
	// endpoint is the endpoint URL the exporter reads, redacted to its
	// scheme, host and path, for logs.
	endpoint string
}

// otelPlan is what the relay exports over OTLP; a nil signal is not
// exported.
type otelPlan struct {
	traces, metrics *otelSignal
}

// EnvError is an OTEL_* variable whose value the relay cannot use; it
// matches ErrInvalidConfig, and the relay exits with status 2 before
// connecting to anything.
type EnvError struct {
	// Var is the variable's name.
	Var string
	// Reason says what is wrong with its value.
	Reason string
}

func (e *EnvError) Error() string { return e.Var + ": " + e.Reason }

// Unwrap makes an EnvError match ErrInvalidConfig.
func (e *EnvError) Unwrap() error { return ErrInvalidConfig }

// readOTelEnv reads the OTEL_* variables through lookup, as the
// OpenTelemetry specification defines them: a signal is exported only when
// an endpoint variable names where (OTEL_EXPORTER_OTLP_ENDPOINT or the
// signal's own), neither OTEL_SDK_DISABLED nor the signal's exporter
// variable turns it off. The variables the exporters and the SDK read
// themselves are checked here, so that a bad value stops the relay (an
// *EnvError) instead of being ignored with a log line; only those of the
// exported signals are checked.
func readOTelEnv(lookup func(string) (string, bool)) (otelPlan, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	disabled, err := envBool(get, "OTEL_SDK_DISABLED")
	if err != nil || disabled {
		return otelPlan{}, err
	}
	var plan otelPlan
	if plan.traces, err = readSignal(get, "traces"); err != nil {
		return otelPlan{}, err
	}
	if plan.metrics, err = readSignal(get, "metrics"); err != nil {
		return otelPlan{}, err
	}
	if plan.traces != nil {
		if err := checkTraceSDK(get); err != nil {
			return otelPlan{}, err
		}
	}
	if plan.metrics != nil {
		if err := checkInts(get, "OTEL_METRIC_EXPORT_INTERVAL", "OTEL_METRIC_EXPORT_TIMEOUT"); err != nil {
			return otelPlan{}, err
		}
	}
	return plan, nil
}

// readSignal reads the variables of one signal; nil means it is not
// exported.
func readSignal(get func(string) string, name string) (*otelSignal, error) {
	upper := strings.ToUpper(name)
	on, err := exporterOn(get, "OTEL_"+upper+"_EXPORTER", name == "metrics")
	if err != nil || !on {
		return nil, err
	}
	endpointVar := "OTEL_EXPORTER_OTLP_" + upper + "_ENDPOINT"
	if get(endpointVar) == "" {
		endpointVar = "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	raw := get(endpointVar)
	if raw == "" {
		return nil, nil
	}
	protocolVar := "OTEL_EXPORTER_OTLP_" + upper + "_PROTOCOL"
	if get(protocolVar) == "" {
		protocolVar = "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	s := &otelSignal{name: name, protocol: protocolHTTPProtobuf}
	switch p := get(protocolVar); p {
	case "", protocolHTTPProtobuf:
	case protocolGRPC:
		s.protocol = protocolGRPC
	default:
		return nil, &EnvError{protocolVar, fmt.Sprintf("protocol %q is not supported (want grpc or http/protobuf)", p)}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, &EnvError{endpointVar, "want an http:// or https:// URL with a host, such as http://collector:4317"}
	}
	if u.Port() != "" {
		if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
			return nil, &EnvError{endpointVar, fmt.Sprintf("port %q is out of range", u.Port())}
		}
	}
	s.endpoint = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	if err := checkExporterVars(get, upper); err != nil {
		return nil, err
	}
	return s, nil
}

// exporterOn reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER: unset or
// "otlp" exports over OTLP, "none" does not. For metrics, "prometheus" is
// accepted beside them: /metrics is always served.
func exporterOn(get func(string) string, name string, metrics bool) (bool, error) {
	v := get(name)
	if v == "" {
		return true, nil
	}
	on, none := false, false
	for e := range strings.SplitSeq(v, ",") {
		switch e = strings.TrimSpace(e); {
		case e == "otlp":
			on = true
		case e == "none":
			none = true
		case e == "prometheus" && metrics:
		default:
			want := "otlp or none"
			if metrics {
				want = "otlp, prometheus or none"
			}
			return false, &EnvError{name, fmt.Sprintf("exporter %q is not supported by the relay (want %s)", e, want)}
		}
	}
	if none && on {
		return false, &EnvError{name, `"none" cannot be combined with another exporter`}
	}
	return on, nil
}

// checkExporterVars checks the variables the OTLP exporter of a signal
// reads, general and per signal (upper is TRACES or METRICS).
func checkExporterVars(get func(string) string, upper string) error {
	for _, scope := range []string{"OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_" + upper + "_"} {
		if _, err := envBool(get, scope+"INSECURE"); err != nil {
			return err
		}
		if err := checkHeaders(get, scope+"HEADERS"); err != nil {
			return err
		}
		if err := checkInts(get, scope+"TIMEOUT"); err != nil {
			return err
		}
		if v := get(scope + "COMPRESSION"); v != "" && v != "gzip" && v != "none" {
			return &EnvError{scope + "COMPRESSION", fmt.Sprintf("%q is not gzip or none", v)}
		}
		for _, f := range []string{"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
			if err := checkPEMFile(get, scope+f, f == "CERTIFICATE"); err != nil {
				return err
			}
		}
		if (get(scope+"CLIENT_CERTIFICATE") == "") != (get(scope+"CLIENT_KEY") == "") {
			return &EnvError{scope + "CLIENT_KEY", scope + "CLIENT_CERTIFICATE and " + scope + "CLIENT_KEY go together"}
		}
	}
	return nil
}

// checkTraceSDK checks the variables the trace SDK reads: the sampler and
// the batch span processor's.
func checkTraceSDK(get func(string) string) error {
	sampler := strings.ToLower(get("OTEL_TRACES_SAMPLER"))
	switch sampler {
	case "", "always_on", "always_off", "parentbased_always_on", "parentbased_always_off":
	case "traceidratio", "parentbased_traceidratio":
		if arg := get("OTEL_TRACES_SAMPLER_ARG"); arg != "" {
			if r, err := strconv.ParseFloat(arg, 64); err != nil || r < 0 || r > 1 {
				return &EnvError{"OTEL_TRACES_SAMPLER_ARG", fmt.Sprintf("%q is not a ratio between 0 and 1", arg)}
			}
		}
	default:
		return &EnvError{"OTEL_TRACES_SAMPLER", fmt.Sprintf("sampler %q is not supported (want always_on, always_off, traceidratio or their parentbased_ forms)", sampler)}
	}
	return checkInts(get, "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE")
}

// envBool reads a boolean variable: unset, "true" or "false", in any case.
func envBool(get func(string) string, name string) (bool, error) {
	switch v := get(name); {
	case v == "" || strings.EqualFold(v, "false"):
		return false, nil
	case strings.EqualFold(v, "true"):
		return true, nil
	default:
		return false, &EnvError{name, fmt.Sprintf("%q is not true or false", v)}
	}
}

// checkInts checks variables holding a non-negative whole number, such as
// milliseconds: "5s" is refused, not read as the default.
func checkInts(get func(string) string, names ...string) error {
	for _, name := range names {
		if v := get(name); v != "" {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return &EnvError{name, fmt.Sprintf("%q is not a whole number (milliseconds for a duration)", v)}
			}
		}
	}
	return nil
}

// checkHeaders checks a headers variable: comma-separated key=value pairs,
// values percent-encoded. Values are never quoted in the error: they often
// hold credentials.
func checkHeaders(get func(string) string, name string) error {
	v := get(name)
	if v == "" {
		return nil
	}
	for pair := range strings.SplitSeq(v, ",") {
		key, value, ok := strings.Cut(pair, "=")
		key = strings.TrimSpace(key)
		if !ok || !validHeaderKey(key) {
			return &EnvError{name, "want comma-separated key=value pairs with header names as keys"}
		}
		if _, err := url.PathUnescape(value); err != nil {
			return &EnvError{name, fmt.Sprintf("the value of %q is not percent-encoded", key)}
		}
	}
	return nil
}

// validHeaderKey reports an HTTP token (RFC 9110).
func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", c):
		default:
			return false
		}
	}
	return true
}

// checkPEMFile checks that a certificate or key file variable names a
// readable PEM file; a CA bundle must hold a certificate.
func checkPEMFile(get func(string) string, name string, caBundle bool) error {
	path := get(name)
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return &EnvError{name, fmt.Sprintf("cannot read %q: %v", path, err)}
	}
	if caBundle && !x509.NewCertPool().AppendCertsFromPEM(b) {
		return &EnvError{name, fmt.Sprintf("%q holds no PEM certificate", path)}
	}
	return nil
}
