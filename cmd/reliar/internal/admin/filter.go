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

// The orders a listing of dead letters takes (the order parameter).
const (
	orderNewest = "newest"
	orderOldest = "oldest"
)

// deadFilter selects a page of dead letters: by message type and tenant,
// newest or oldest first, from a keyset cursor (Before for the newest
// first, After for the oldest first), limit rows at a time.
type deadFilter struct {
	Type   string
	Tenant string
	// Order is orderNewest or orderOldest; empty is the oldest first.
	Order  string
	After  int64
	Before int64
	Limit  int
}

// parseFilter reads type, tenant, order, after, before and limit from v;
// limit defaults to defaultLimit.
func parseFilter(v url.Values, defaultLimit int) (deadFilter, error) {
	f := deadFilter{Type: v.Get("type"), Tenant: v.Get("tenant"), Limit: defaultLimit}
	for name, s := range map[string]string{"type": f.Type, "tenant": f.Tenant} {
		if len(s) > maxFilterLen || !utf8.ValidString(s) {
			return deadFilter{}, fmt.Errorf("%w: %s must be valid UTF-8 of at most %d bytes", ErrBadRequest, name, maxFilterLen)
		}
	}
	switch o := v.Get("order"); o {
	case "", orderNewest, orderOldest:
		f.Order = o
	default:
		return deadFilter{}, fmt.Errorf("%w: order must be %s or %s, not %q", ErrBadRequest, orderNewest, orderOldest, o)
	}
	for name, dst := range map[string]*int64{"after": &f.After, "before": &f.Before} {
		if s := v.Get(name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return deadFilter{}, fmt.Errorf("%w: %s must be a sequence number, not %q", ErrBadRequest, name, s)
			}
			*dst = n
		}
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

// Newest reports whether the filter lists the newest first.
func (f deadFilter) Newest() bool { return f.Order == orderNewest }

// query is the store's query of the filter.
func (f deadFilter) query() outbox.DeadQuery {
	q := outbox.DeadQuery{MessageType: f.Type, TenantID: f.Tenant, Limit: f.Limit}
	if f.Newest() {
		q.Newest, q.BeforeSequence = true, f.Before
	} else {
		q.AfterSequence = f.After
	}
	return q
}

// withOrder returns the filter listing in order from the first page.
func (f deadFilter) withOrder(order string) deadFilter {
	f.Order, f.After, f.Before = order, 0, 0
	return f
}

// OrderURL returns the page's address listing the filter in order, from
// its first page: for the newest first, the page of the newest dead
// letters.
func (f deadFilter) OrderURL(order string) string { return f.withOrder(order).PageURL() }

// values encodes the filter, leaving out what is empty or the default.
func (f deadFilter) values(defaultLimit int) url.Values {
	v := url.Values{}
	if f.Type != "" {
		v.Set("type", f.Type)
	}
	if f.Tenant != "" {
		v.Set("tenant", f.Tenant)
	}
	if f.Order == orderNewest {
		v.Set("order", orderNewest)
	}
	if f.After > 0 && !f.Newest() {
		v.Set("after", strconv.FormatInt(f.After, 10))
	}
	if f.Before > 0 && f.Newest() {
		v.Set("before", strconv.FormatInt(f.Before, 10))
	}
	if f.Limit != defaultLimit {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	return v
}

// PageURL is the dashboard's address showing the filter: always a path on
// this server. The page lists the oldest first unless order=newest.
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
