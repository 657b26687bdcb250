package doctor

import (
	"context"
	"fmt"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
)

// CheckBroker names the check of a broker that could not be asked; the
// broker's own checks are named "broker: <what>" ("broker: nats stream").
const CheckBroker = "broker"

// BrokerChecks checks the broker side of a relay's set-up (see
// broker.Location.Inspect): the JetStream stream capturing the subject
// prefix, the RabbitMQ exchange, the Kafka topics. A broker that cannot be
// reached is one red check.
func BrokerChecks(ctx context.Context, loc broker.Location) []Check {
	findings, err := loc.Inspect(ctx)
	if err != nil {
		return []Check{{
			Name: CheckBroker, Verdict: Red,
			Found: fmt.Sprintf("%s: %v", loc, err),
			Why:   "the relay cannot publish while the broker cannot be reached",
			Fix:   "check --broker and that the broker runs and accepts this host's connections",
		}}
	}
	if len(findings) == 0 {
		return []Check{{Name: CheckBroker, Verdict: OK, Found: fmt.Sprintf("%s: nothing to create on a %s broker", loc, loc.Kind())}}
	}
	checks := make([]Check, 0, len(findings))
	for _, f := range findings {
		checks = append(checks, Check{Name: CheckBroker + ": " + f.Name, Verdict: Verdict(f.Verdict), Found: f.Found, Why: f.Why, Fix: f.Fix})
	}
	return checks
}
