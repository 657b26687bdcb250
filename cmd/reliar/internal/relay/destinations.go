package relay

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/broker"
)

// usableWindow is how recently a publish must have succeeded for the relay
// to count a destination with due rows as usable while another is broken.
const usableWindow = time.Minute

// destinations tracks the broker destinations that take no message until
// an operator fixes something (no JetStream stream for the subject, no
// exchange, no topic): the readiness rule's "every destination with due
// rows is unusable". A publish to a broken destination fails transiently,
// so one message alone never opens the breaker; this says so at once.
//
// A destination is broken from its first such failure, logged at warn
// with the fix, until a publish to it succeeds or the prober's recheck
// finds it fixed. The relay is not ready while some destination is broken
// and no publish succeeded within usableWindow: then every destination
// that has rows is a broken one.
type destinations struct {
	broker *broker.Broker
	log    *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	broken map[string]*broker.Problem
	lastOK time.Time
}

func newDestinations(b *broker.Broker, log *slog.Logger) *destinations {
	return &destinations{broker: b, log: log, now: time.Now, broken: map[string]*broker.Problem{}}
}

// observe records the outcome of one publish.
func (d *destinations) observe(env *reliar.SerializedEnvelope, err error) {
	if err == nil {
		d.succeeded(env)
		return
	}
	p := d.broker.Diagnose(env, err)
	if p == nil {
		return
	}
	d.mu.Lock()
	_, known := d.broken[p.Destination]
	d.broken[p.Destination] = p
	d.mu.Unlock()
	if !known {
		d.log.Warn("broker destination unusable: its messages wait and are retried until it is fixed",
			"destination", p.Destination, "problem", p.Missing, "fix", p.Fix)
	}
}

// succeeded notes a delivered message: its destination works.
func (d *destinations) succeeded(env *reliar.SerializedEnvelope) {
	d.mu.Lock()
	d.lastOK = d.now()
	var fixed string
	if len(d.broken) > 0 {
		if dest := d.broker.Destination(env); d.broken[dest] != nil {
			fixed = dest
			delete(d.broken, dest)
		}
	}
	d.mu.Unlock()
	if fixed != "" {
		d.log.Info("broker destination usable again", "destination", fixed)
	}
}

// recheck asks the broker whether each broken destination was fixed
// meanwhile (with --create-stream, a missing stream is created here).
func (d *destinations) recheck(ctx context.Context) {
	d.mu.Lock()
	problems := make([]*broker.Problem, 0, len(d.broken))
	for _, p := range d.broken {
		problems = append(problems, p)
	}
	d.mu.Unlock()
	for _, p := range problems {
		fixed, known, err := p.Recheck(ctx)
		if err != nil {
			d.log.Debug("recheck of a broker destination failed", "destination", p.Destination, "error", err)
		}
		if !known || !fixed {
			continue
		}
		d.mu.Lock()
		if d.broken[p.Destination] == p {
			delete(d.broken, p.Destination)
		}
		d.mu.Unlock()
		d.log.Info("broker destination fixed; its messages go out at their next retry", "destination", p.Destination)
	}
}

// problems returns one readiness reason per broken destination while no
// publish succeeded within usableWindow, else none.
func (d *destinations) problems() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.broken) == 0 || (!d.lastOK.IsZero() && d.now().Sub(d.lastOK) < usableWindow) {
		return nil
	}
	out := make([]string, 0, len(d.broken))
	for _, p := range d.broken {
		out = append(out, "destination "+p.Destination+": "+p.Missing+"; fix: "+p.Fix)
	}
	sort.Strings(out)
	return out
}

// wrap returns pub reporting every outcome to d, with the same optional
// interfaces (BatchPublisher, DedupWindower) as pub.
func (d *destinations) wrap(pub reliar.Publisher) reliar.Publisher {
	w := &watchedPublisher{pub: pub, d: d}
	batch, isBatch := pub.(reliar.BatchPublisher)
	dedup, isDedup := pub.(reliar.DedupWindower)
	switch {
	case isBatch && isDedup:
		return struct {
			*watchedBatchPublisher
			reliar.DedupWindower
		}{&watchedBatchPublisher{w, batch}, dedup}
	case isBatch:
		return &watchedBatchPublisher{w, batch}
	case isDedup:
		return struct {
			*watchedPublisher
			reliar.DedupWindower
		}{w, dedup}
	}
	return w
}

// watchedPublisher reports each publish's outcome to its destinations.
type watchedPublisher struct {
	pub reliar.Publisher
	d   *destinations
}

func (w *watchedPublisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	err := w.pub.Publish(ctx, env)
	w.d.observe(env, err)
	return err
}

// watchedBatchPublisher is a watchedPublisher over a BatchPublisher.
type watchedBatchPublisher struct {
	*watchedPublisher
	batch reliar.BatchPublisher
}

func (w *watchedBatchPublisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	errs := w.batch.PublishBatch(ctx, envs)
	if len(errs) == len(envs) {
		for i, env := range envs {
			w.d.observe(env, errs[i])
		}
	}
	return errs
}

// watch makes /readyz report d's broken destinations.
func (r *readiness) watch(d *destinations) {
	r.mu.Lock()
	r.destinations = d
	r.mu.Unlock()
}

// brokerInspectTimeout bounds the start-up inspection of the broker.
const brokerInspectTimeout = 10 * time.Second

// warnBrokerSetup checks at start-up what the broker must hold for the
// relay's messages (a stream, an exchange, topics) and logs at warn what
// is missing and how to fix it, before any message fails for it. A broker
// that cannot be asked is left to the readiness probe.
func warnBrokerSetup(ctx context.Context, loc broker.Location, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, brokerInspectTimeout)
	defer cancel()
	findings, err := loc.Inspect(ctx)
	if err != nil {
		log.Debug("could not inspect the broker's set-up", "error", err)
		return
	}
	for _, f := range findings {
		if f.Verdict != broker.FindingOK {
			log.Warn("broker set-up: "+f.Found, "check", f.Name, "fix", f.Fix)
		}
	}
}
