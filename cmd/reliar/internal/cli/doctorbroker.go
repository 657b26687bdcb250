package cli

import (
	"github.com/spf13/pflag"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// doctorBroker holds doctor's broker flags: the relay's --broker and the
// options that name where its messages go.
type doctorBroker struct {
	url  string
	opts broker.Options
}

func (b *doctorBroker) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&b.url, "broker", "", "also check the relay's broker: nats://, kafka://, amqp:// (as reliar relay takes it)")
	fl.StringVar(&b.opts.SubjectPrefix, "subject-prefix", "", `with a nats:// --broker: the relay's subject prefix (default "reliar")`)
	fl.StringSliceVar(&b.opts.Topics, "topic", nil, `with a kafka:// --broker: the relay's --topic values (default "reliar")`)
	fl.StringVar(&b.opts.Exchange, "exchange", "", `with an amqp:// --broker: the relay's exchange (default "reliar")`)
}

// location parses the broker flags; nil when --broker is not given.
func (b *doctorBroker) location() (*broker.Location, error) {
	if b.url == "" {
		return nil, nil
	}
	loc, err := broker.Parse(b.url, b.opts)
	if err != nil {
		return nil, exitcode.UsageError(err)
	}
	return &loc, nil
}
