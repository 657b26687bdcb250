package main

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP collector served by the test: the collector's
// TraceService and MetricsService over gRPC, and POST /v1/traces and
// /v1/metrics over HTTP with protobuf bodies. It keeps what it receives.
type otlpReceiver struct {
	grpcAddr string // host:port of the gRPC server
	httpURL  string // http(s)://host:port of the HTTP server
	caFile   string // the PEM file of the servers' certificate, with TLS

	mu       sync.Mutex
	spans    []receivedSpan
	metrics  map[string]*metricspb.Metric // the last one received, by name
	resource map[string]string            // the last resource seen
	headers  map[string]string            // the last value of each request header asked for
	requests map[string]int               // requests by transport and signal, e.g. "grpc traces"

	wantHeaders []string
}

// receivedSpan is one span with the scope it came under.
type receivedSpan struct {
	*tracepb.Span
	scope string
}

// startOTLPReceiver starts both servers without TLS; they stop when the
// test ends. The values of the request headers named in wantHeaders are
// kept.
func startOTLPReceiver(t *testing.T, wantHeaders ...string) *otlpReceiver {
	t.Helper()
	return startReceiver(t, false, wantHeaders)
}

// startReceiver is startOTLPReceiver, with TLS on both servers when withTLS
// is set, under a certificate for 127.0.0.1 whose PEM file caFile names.
func startReceiver(t *testing.T, withTLS bool, wantHeaders []string) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{metrics: map[string]*metricspb.Metric{}, headers: map[string]string{}, requests: map[string]int{}, wantHeaders: wantHeaders}

	hs := httptest.NewUnstartedServer(http.NewServeMux())
	var grpcOpts []grpc.ServerOption
	if withTLS {
		hs.StartTLS()
		cert := hs.TLS.Certificates[0]
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
		r.caFile = filepath.Join(t.TempDir(), "ca.pem")
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
		if err := os.WriteFile(r.caFile, pemBytes, 0o600); err != nil {
			t.Fatal(err)
		}
	} else {
		hs.Start()
	}
	t.Cleanup(hs.Close)
	r.httpURL = hs.URL

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpcOpts...)
	coltracepb.RegisterTraceServiceServer(srv, grpcTraces{r: r})
	colmetricspb.RegisterMetricsServiceServer(srv, grpcMetrics{r: r})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-served
	})
	r.grpcAddr = ln.Addr().String()

	mux := hs.Config.Handler.(*http.ServeMux)
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if !readProto(t, w, req, &in) {
			return
		}
		r.gotTraces("http traces", &in, func(k string) string { return req.Header.Get(k) })
		writeProto(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var in colmetricspb.ExportMetricsServiceRequest
		if !readProto(t, w, req, &in) {
			return
		}
		r.gotMetrics("http metrics", &in, func(k string) string { return req.Header.Get(k) })
		writeProto(w, &colmetricspb.ExportMetricsServiceResponse{})
	})
	return r
}

// readProto decodes an OTLP/HTTP protobuf body, answering 400 to anything
// else.
func readProto(t *testing.T, w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		t.Errorf("OTLP/HTTP request with Content-Type %q, want application/x-protobuf", ct)
		http.Error(w, "want application/x-protobuf", http.StatusUnsupportedMediaType)
		return false
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = gz
	}
	b, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		t.Errorf("OTLP/HTTP body: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeProto(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	r *otlpReceiver
}

func (g grpcTraces) Export(ctx context.Context, in *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.r.gotTraces("grpc traces", in, grpcHeader(ctx))
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *otlpReceiver
}

func (g grpcMetrics) Export(ctx context.Context, in *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	g.r.gotMetrics("grpc metrics", in, grpcHeader(ctx))
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

func grpcHeader(ctx context.Context) func(string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	return func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
}

func (r *otlpReceiver) gotTraces(what string, in *coltracepb.ExportTraceServiceRequest, header func(string) string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[what]++
	r.keepHeaders(header)
	for _, rs := range in.GetResourceSpans() {
		r.keepResource(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{Span: s, scope: ss.GetScope().GetName()})
			}
		}
	}
}

func (r *otlpReceiver) gotMetrics(what string, in *colmetricspb.ExportMetricsServiceRequest, header func(string) string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[what]++
	r.keepHeaders(header)
	for _, rm := range in.GetResourceMetrics() {
		r.keepResource(rm.GetResource().GetAttributes())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				r.metrics[m.GetName()] = m
			}
		}
	}
}

func (r *otlpReceiver) keepHeaders(header func(string) string) {
	for _, k := range r.wantHeaders {
		if v := header(k); v != "" {
			r.headers[k] = v
		}
	}
}

func (r *otlpReceiver) keepResource(attrs []*commonpb.KeyValue) {
	r.resource = map[string]string{}
	for _, kv := range attrs {
		r.resource[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
}

// received returns copies of what arrived so far.
func (r *otlpReceiver) received() (spans []receivedSpan, resource, headers map[string]string, requests map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	resource, headers, requests = map[string]string{}, map[string]string{}, map[string]int{}
	for k, v := range r.resource {
		resource[k] = v
	}
	for k, v := range r.headers {
		headers[k] = v
	}
	for k, v := range r.requests {
		requests[k] = v
	}
	return append([]receivedSpan(nil), r.spans...), resource, headers, requests
}

// spansNamed returns the spans of one name received so far.
func (r *otlpReceiver) spansNamed(name string) []receivedSpan {
	spans, _, _, _ := r.received()
	var out []receivedSpan
	for _, s := range spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// sum returns the value of the cumulative sum name in its last export,
// added up over its data points, and whether it arrived.
func (r *otlpReceiver) sum(name string) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.metrics[name]
	if !ok || m.GetSum() == nil {
		return 0, false
	}
	var total int64
	for _, p := range m.GetSum().GetDataPoints() {
		total += p.GetAsInt()
	}
	return total, true
}

// metricNames returns the names of the metrics received so far.
func (r *otlpReceiver) metricNames() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for name := range r.metrics {
		out[name] = true
	}
	return out
}
