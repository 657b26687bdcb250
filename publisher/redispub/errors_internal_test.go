package redispub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar"
)

// serverError is a Redis error reply, as the server sends it.
type serverError string

func (e serverError) Error() string { return string(e) }
func (serverError) RedisError()     {}

var _ redis.Error = serverError("")

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want reliar.FailureKind
	}{
		{serverError("WRONGTYPE Operation against a key holding the wrong kind of value"), reliar.FailureTransient},
		{serverError("NOPERM this user has no permissions to access one of the keys used as arguments"), reliar.FailureTransient},
		{serverError("NOAUTH Authentication required."), reliar.FailureTransient},
		{serverError("WRONGPASS invalid username-password pair or user is disabled."), reliar.FailureTransient},
		{serverError("LOADING Redis is loading the dataset in memory"), reliar.FailureTransient},
		{serverError("READONLY You can't write against a read only replica."), reliar.FailureTransient},
		{serverError("OOM command not allowed when used memory > 'maxmemory'."), reliar.FailureTransient},
		{serverError("ERR max number of clients reached"), reliar.FailureTransient},
		{serverError("CLUSTERDOWN The cluster is down"), reliar.FailureTransient},
		{serverError("MASTERDOWN Link with MASTER is down"), reliar.FailureTransient},
		{redis.ErrClosed, reliar.FailureTransient},
		{redis.ErrPoolTimeout, reliar.FailureTransient},
		{io.EOF, reliar.FailureTransient},
		{context.Canceled, reliar.FailureTransient},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), reliar.FailureTransient},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			got := classify(tt.err)
			if k := reliar.KindOf(got); k != tt.want {
				t.Errorf("classify(%v) is %v, want %v", tt.err, k, tt.want)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("classify(%v) = %v hides the original error", tt.err, got)
			}
		})
	}
}

func TestDefaultStream(t *testing.T) {
	o, err := buildOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := o.streamFn(&reliar.SerializedEnvelope{MessageType: "orders.placed"}); got != "reliar" {
		t.Fatalf("default stream %q, want reliar", got)
	}
}

func TestFirstErr(t *testing.T) {
	a, b := errors.New("a"), errors.New("b")
	tests := []struct {
		errs []error
		want error
	}{{nil, nil}, {[]error{nil, b}, b}, {[]error{a, b}, a}, {[]error{nil, nil}, nil}}
	for _, tt := range tests {
		if got := firstErr(tt.errs...); got != tt.want {
			t.Errorf("firstErr(%v) = %v, want %v", tt.errs, got, tt.want)
		}
	}
}
