package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
)

// natsStreams is what JetStream holds for a subject prefix: the streams
// whose subjects capture every subject under it, and those that capture
// only some.
type natsStreams struct {
	covering []string
	partial  []string // "NAME (subj, subj)"
}

// findStreams lists the streams capturing subjects under "<prefix>.>".
func findStreams(ctx context.Context, js jetstream.JetStream, prefix string) (natsStreams, error) {
	var found natsStreams
	all := prefix + ".>"
	lister := js.ListStreams(ctx, jetstream.WithStreamListSubject(all))
	for info := range lister.Info() {
		if slices.ContainsFunc(info.Config.Subjects, func(s string) bool { return subjectCovers(s, all) }) {
			found.covering = append(found.covering, info.Config.Name)
		} else {
			found.partial = append(found.partial, fmt.Sprintf("%s (%s)", info.Config.Name, strings.Join(info.Config.Subjects, ", ")))
		}
	}
	if err := lister.Err(); err != nil {
		return natsStreams{}, fmt.Errorf("natspub: list streams: %w", err)
	}
	return found, nil
}

// subjectCovers reports whether the subject filter pattern captures every
// subject that filter does (both may hold the wildcards * and >).
func subjectCovers(pattern, filter string) bool {
	p, f := strings.Split(pattern, "."), strings.Split(filter, ".")
	for i, tok := range p {
		switch {
		case tok == ">":
			return i < len(f)
		case i >= len(f):
			return false
		case tok == "*":
			if f[i] == ">" {
				return false
			}
		case tok != f[i]:
			return false
		}
	}
	return len(p) == len(f)
}

// streamName is the name --create-stream gives the stream of a prefix: the
// prefix in capitals, the characters a stream name cannot hold replaced by
// underscores.
func streamName(prefix string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`.*>/\`, r) {
			return '_'
		}
		return r
	}, strings.ToUpper(prefix))
}

// natsStreamFix says how to create the stream of a prefix.
func natsStreamFix(prefix string) string {
	return fmt.Sprintf(`create a stream capturing "%s.>" (nats stream add %s --subjects '%s.>' --defaults), or start the relay with --create-stream`,
		prefix, streamName(prefix), prefix)
}

// ensureStream creates the stream of prefix (file storage, the server's
// defaults otherwise) when no stream captures any subject under it. A
// stream that captures some of them is left alone: a second stream would
// overlap it, which JetStream refuses.
func ensureStream(ctx context.Context, js jetstream.JetStream, prefix string, log *slog.Logger) error {
	found, err := findStreams(ctx, js, prefix)
	if err != nil {
		return err
	}
	if len(found.covering) > 0 || len(found.partial) > 0 {
		return nil
	}
	name := streamName(prefix)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, Storage: jetstream.FileStorage})
	if err != nil {
		return fmt.Errorf("natspub: create stream %s on %q: %w", name, prefix+".>", err)
	}
	log.Warn("created a JetStream stream for the relay's subjects (--create-stream)", "stream", name, "subjects", prefix+".>")
	return nil
}

// natsDestination names a subject as a destination.
func natsDestination(subject string) string { return fmt.Sprintf("NATS subject %q", subject) }

// natsDiagnose returns the diagnosis of the NATS publisher's errors: no
// stream captures the message's subject.
func natsDiagnose(js jetstream.JetStream, prefix string, create bool, log *slog.Logger) func(*reliar.SerializedEnvelope, error) *Problem {
	return func(env *reliar.SerializedEnvelope, err error) *Problem {
		if !errors.Is(err, natspub.ErrNoStream) {
			return nil
		}
		subject := prefix + "." + env.MessageType
		return &Problem{
			Destination: natsDestination(subject),
			Missing:     "no JetStream stream captures it",
			Fix:         natsStreamFix(prefix),
			recheck: func(ctx context.Context) (bool, error) {
				if create {
					if err := ensureStream(ctx, js, prefix, log); err != nil {
						return false, err
					}
				}
				_, err := js.StreamNameBySubject(ctx, subject)
				switch {
				case err == nil:
					return true, nil
				case errors.Is(err, jetstream.ErrStreamNotFound):
					return false, nil
				}
				return false, err
			},
		}
	}
}

// inspectNATS checks, on a connection of its own, that a JetStream stream
// captures every subject under the prefix.
func inspectNATS(raw string, o Options) func(ctx context.Context) ([]Finding, error) {
	prefix := o.SubjectPrefix
	if prefix == "" {
		prefix = natspub.DefaultSubjectPrefix
	}
	return func(ctx context.Context) ([]Finding, error) {
		nc, err := nats.Connect(raw, nats.Name("reliar inspect"), nats.Timeout(natsDialTimeout))
		if err != nil {
			return nil, fmt.Errorf("natspub: connect: %w", err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return nil, fmt.Errorf("natspub: jetstream: %w", err)
		}
		found, err := findStreams(ctx, js, prefix)
		if err != nil {
			return nil, err
		}
		f := Finding{Name: "nats stream"}
		all := prefix + ".>"
		switch {
		case len(found.covering) > 0:
			f.Verdict = FindingOK
			f.Found = fmt.Sprintf("stream %s captures %q", strings.Join(found.covering, ", "), all)
		case len(found.partial) > 0:
			f.Verdict = FindingWarn
			f.Found = fmt.Sprintf("streams capture only some subjects under %q: %s", all, strings.Join(found.partial, "; "))
			f.Why = "messages of the other types find no stream: they wait and are retried, and /readyz answers 503 while they are all the relay has"
			f.Fix = fmt.Sprintf("add the missing subjects to a stream, or capture %q in one stream", all)
		default:
			f.Verdict = FindingRed
			f.Found = fmt.Sprintf("no JetStream stream captures any subject under %q", all)
			f.Why = "no message is delivered: every publish fails, the messages wait and are retried, and /readyz answers 503"
			f.Fix = natsStreamFix(prefix)
		}
		return []Finding{f}, nil
	}
}
