package kafkapub

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/reliar/reliar"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrTooLarge is wrapped by the permanent error of a record larger than
// its topic's max.message.bytes, or than the client's batch limit
// (kgo.ProducerBatchMaxBytes), whichever is smaller.
var ErrTooLarge = errors.New("kafkapub: record too large for its topic")

const (
	// limitRefresh is how long a topic's max.message.bytes is trusted
	// before it is read from the broker again.
	limitRefresh = time.Minute
	// limitRetry is how long a failed read of it is not repeated: the
	// record is then sent unchecked, and the broker judges.
	limitRetry = 5 * time.Second
	// limitTimeout bounds one read, within the publish's own context.
	limitTimeout = 2 * time.Second
	// recordBatchOverhead is the size of a record batch's header, which
	// the broker counts against max.message.bytes.
	recordBatchOverhead = 61
)

// limits caches the max.message.bytes of each topic, read from the broker
// with DescribeConfigs.
type limits struct {
	client *kgo.Client
	mu     sync.Mutex
	topics map[string]*topicLimit
}

// topicLimit is one topic's limit: 0 when unknown; ready is closed once
// the read that fills it ended.
type topicLimit struct {
	bytes   int
	expires time.Time
	ready   chan struct{}
}

// forTopic returns topic's max.message.bytes, or 0 when it cannot be known
// now (the topic does not exist, the client may not describe it, ctx
// ended).
func (l *limits) forTopic(ctx context.Context, topic string) int {
	l.mu.Lock()
	e := l.topics[topic]
	if e != nil && (time.Now().Before(e.expires) || !isClosed(e.ready)) {
		l.mu.Unlock()
		select {
		case <-e.ready:
			return e.bytes
		case <-ctx.Done():
			return 0
		}
	}
	e = &topicLimit{ready: make(chan struct{})}
	l.topics[topic] = e
	l.mu.Unlock()

	n, err := l.describe(ctx, topic)
	l.mu.Lock()
	e.bytes = n
	e.expires = time.Now().Add(limitRefresh)
	if err != nil {
		e.bytes, e.expires = 0, time.Now().Add(limitRetry)
	}
	close(e.ready)
	l.mu.Unlock()
	return e.bytes
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// describe reads topic's max.message.bytes from the broker.
func (l *limits) describe(ctx context.Context, topic string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, limitTimeout)
	defer cancel()
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeTopic
	res.ResourceName = topic
	res.ConfigNames = []string{"max.message.bytes"}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, l.client)
	if err != nil {
		return 0, err
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return 0, err
		}
		for _, c := range r.Configs {
			if c.Name == "max.message.bytes" && c.Value != nil {
				return strconv.Atoi(*c.Value)
			}
		}
	}
	return 0, errors.New("kafkapub: max.message.bytes not described")
}

// checkSize fails rec permanently when its record batch cannot fit the
// topic's limit or the client's.
func (p *Publisher) checkSize(ctx context.Context, env *reliar.SerializedEnvelope, rec *kgo.Record) error {
	size := batchSize(rec)
	limit := p.clientLimit(rec.Topic)
	if topic := p.limits.forTopic(ctx, rec.Topic); topic > 0 && (limit <= 0 || topic < limit) {
		limit = topic
	}
	if limit > 0 && size > limit {
		return reliar.Permanent(fmt.Errorf("%w: message %s is a record batch of %d bytes, and %q takes at most %d (max.message.bytes, or the client's ProducerBatchMaxBytes)",
			ErrTooLarge, env.ID, size, rec.Topic, limit))
	}
	return nil
}

// clientLimit is the client's ProducerBatchMaxBytes for topic.
func (p *Publisher) clientLimit(topic string) int {
	if fn, ok := p.client.OptValue(kgo.ProducerBatchMaxBytesFn).(func(string) int32); ok && fn != nil {
		return int(fn(topic))
	}
	return 0
}

// batchSize is the size of a record batch holding rec alone, uncompressed,
// as the broker measures it against max.message.bytes.
func batchSize(rec *kgo.Record) int {
	body := 1 + varintLen(0) + varintLen(0) // attributes, timestamp and offset deltas
	body += bytesLen(rec.Key) + bytesLen(rec.Value)
	body += varintLen(int64(len(rec.Headers)))
	for _, h := range rec.Headers {
		body += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	return recordBatchOverhead + varintLen(int64(body)) + body
}

// bytesLen is the encoded size of a nullable byte field.
func bytesLen(b []byte) int {
	if b == nil {
		return varintLen(-1)
	}
	return varintLen(int64(len(b))) + len(b)
}

// varintLen is the size of n as a zig-zag varint.
func varintLen(n int64) int {
	u := uint64(n<<1) ^ uint64(n>>63)
	l := 1
	for u >= 0x80 {
		u >>= 7
		l++
	}
	return l
}
