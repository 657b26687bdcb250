package flagval

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/reliar/reliar/store/pgstore"
)

// schema is a schema flag: a plain identifier, never empty when given.
type schema struct{ p *string }

// Schema defines a --schema flag. Unset, it is empty (the store's default);
// given, it must be a plain identifier (letters, digits, _; at most 63),
// never empty: an empty --schema ” is refused rather than taken for the
// default.
func Schema(fs *pflag.FlagSet, p *string, name, usage string) {
	fs.Var(&schema{p: p}, name, usage)
}

func (v *schema) Set(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty; leave the flag out for the default schema", ErrBadValue)
	}
	if err := pgstore.ValidateSchema(s); err != nil {
		return fmt.Errorf("%w: %w", ErrBadValue, err)
	}
	*v.p = s
	return nil
}

func (v *schema) String() string { return *v.p }

func (v *schema) Type() string { return "string" }

// addr is a listen address flag.
type addr struct{ p *string }

// Addr defines a host:port flag with default def. The port must be a
// number from 0 (any free port) to 65535; the host may be empty (every
// interface), an IP address or a name.
func Addr(fs *pflag.FlagSet, p *string, name, def, usage string) {
	*p = def
	fs.Var(&addr{p: p}, name, usage)
}

// CheckAddr checks a host:port listen address as Addr does.
func CheckAddr(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%w %q: want host:port, such as 127.0.0.1:9090 or :9090", ErrBadValue, s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%w %q: the port must be a number from 0 to 65535", ErrBadValue, s)
	}
	if strings.ContainsAny(host, " /\\?#@") {
		return fmt.Errorf("%w %q: not a host name or address", ErrBadValue, s)
	}
	return nil
}

func (v *addr) Set(s string) error {
	if err := CheckAddr(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

func (v *addr) String() string { return *v.p }

func (v *addr) Type() string { return "string" }
