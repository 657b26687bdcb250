package admin

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/reliar/reliar/outbox"
)

// ErrBadRequest is matched (with errors.Is) by the errors about a request's
// parameters, which are answered with 400.
var ErrBadRequest = errors.New("bad request")

// maxFilterLen bounds a filter value.
const maxFilterLen = 256

// deadFilter selects a page of dead letters: by message type and tenant,
// from a keyset cursor, limit rows at a time.
type deadFilter struct {
	Type   string
	Tenant string
	After  int64
	Limit  int
}

// parseFilter reads type, tenant, after and limit from v; limit defaults to
// defaultLimit.
func parseFilter(v url.Values, defaultLimit int) (deadFilter, error) {
	f := deadFilter{Type: v.Get("type"), Tenant: v.Get("tenant"), Limit: defaultLimit}
	for name, s := range map[string]string{"type": f.Type, "tenant": f.Tenant} {
		if len(s) > maxFilterLen || !utf8.ValidString(s) {
			return deadFilter{}, fmt.Errorf("%w: %s must be valid UTF-8 of at most %d bytes", ErrBadRequest, name, maxFilterLen)
		}
	}
	if s := v.Get("after"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return deadFilter{}, fmt.Errorf("%w: after must be a sequence number, not %q", ErrBadRequest, s)
		}
		f.After = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return deadFilter{}, fmt.Errorf("%w: limit must be between 1 and 1000, not %q", ErrBadRequest, s)
		}
		f.Limit = n
	}
	return f, nil
}

// query is the store's query of the filter.
func (f deadFilter) query() outbox.DeadQuery {
	return outbox.DeadQuery{MessageType: f.Type, TenantID: f.Tenant, AfterSequence: f.After, Limit: f.Limit}
}

// values encodes the filter, leaving out what is empty or the default.
func (f deadFilter) values(defaultLimit int) url.Values {
	v := url.Values{}
	if f.Type != "" {
		v.Set("type", f.Type)
	}
	if f.Tenant != "" {
		v.Set("tenant", f.Tenant)
	}
	if f.After > 0 {
		v.Set("after", strconv.FormatInt(f.After, 10))
	}
	if f.Limit != defaultLimit {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	return v
}

// PageURL is the dashboard's address showing the filter: always a path on
// this server.
func (f deadFilter) PageURL() string {
	v := f.values(pageLimit)
	if len(v) == 0 {
		return "/"
	}
	return "/?" + v.Encode()
}

// Describe says in words which dead letters the filter's type and tenant
// select.
func (f deadFilter) Describe() string {
	switch {
	case f.Type != "" && f.Tenant != "":
		return fmt.Sprintf("every dead letter of type %q and tenant %q", f.Type, f.Tenant)
	case f.Type != "":
		return fmt.Sprintf("every dead letter of type %q", f.Type)
	case f.Tenant != "":
		return fmt.Sprintf("every dead letter of tenant %q", f.Tenant)
	}
	return "every dead letter"
}
