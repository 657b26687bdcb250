// Package report holds the benchmark's results: one JSON line per run, the
// table of medians printed at the end, and the summary line of a quick run.
package report

import "time"

// Scenario names.
const (
	// Drain is the time until a preloaded backlog is all marked done.
	Drain = "drain"
	// Enqueue is the producer's throughput while preloading that backlog.
	Enqueue = "enqueue"
	// Latency is commit → publish latency of paced single-message
	// transactions on an idle system.
	Latency = "latency"
	// JetStream is drain throughput with a NATS JetStream publish per
	// message instead of the no-op sink.
	JetStream = "jetstream"
	// EnqueueTx is the time of a single-message producer transaction
	// (begin, one enqueue, commit), timed by the producer, with nothing
	// dispatching.
	EnqueueTx = "enqueue_tx"
	// Burst is producers committing single-message transactions at full
	// speed while the system dispatches: delivered messages per second and
	// commit → delivery latency.
	Burst = "burst"
	// BurstAlone is the same producers with nothing dispatching: the
	// commit rate the dispatcher competes with.
	BurstAlone = "burst_alone"
)

// Result is one run of one system in one scenario: one JSON line.
type Result struct {
	// Time is when the run ended.
	Time time.Time `json:"time"`
	// Scenario is one of the scenario names above.
	Scenario string `json:"scenario"`
	// System names the system and its settings.
	System string `json:"system"`
	// Rep is the 1-based repetition.
	Rep int `json:"rep"`
	// Quick marks a reduced run.
	Quick bool `json:"quick,omitempty"`
	// Messages is the number of messages of the run.
	Messages int `json:"messages"`
	// PayloadBytes is the size of each message's payload.
	PayloadBytes int `json:"payload_bytes"`
	// PerTx is the number of messages per producer transaction.
	PerTx int `json:"per_tx,omitempty"`
	// Producers is the number of concurrent producers of Burst and
	// BurstAlone.
	Producers int `json:"producers,omitempty"`
	// Seconds is the measured wall time.
	Seconds float64 `json:"seconds,omitempty"`
	// PerSecond is Messages / Seconds: for Burst, messages delivered per
	// second; for BurstAlone, messages committed per second; for
	// EnqueueTx, transactions per second of the one producer.
	PerSecond float64 `json:"per_second,omitempty"`
	// ArrivedSeconds is, for Drain, the time until the sink had every
	// message (Seconds also waits for the database to mark them done).
	ArrivedSeconds float64 `json:"arrived_seconds,omitempty"`
	// CPUNsPerMsg is this process's CPU time per message during the timed
	// part (the database's CPU time is not in it).
	CPUNsPerMsg float64 `json:"cpu_ns_per_msg,omitempty"`
	// P50Ms, P99Ms and MaxMs are the scenario's latency percentiles. For
	// Latency and Burst: commit → publish, from the producer's Commit
	// returning to the sink's receipt. For EnqueueTx and BurstAlone: the
	// producer transaction, from before its Begin to its Commit returning.
	P50Ms float64 `json:"p50_ms,omitempty"`
	P99Ms float64 `json:"p99_ms,omitempty"`
	MaxMs float64 `json:"max_ms,omitempty"`
	// TxP50Ms and TxP99Ms measure from the send time carried in the
	// payload, taken before the producer's transaction began.
	TxP50Ms float64 `json:"tx_p50_ms,omitempty"`
	TxP99Ms float64 `json:"tx_p99_ms,omitempty"`
	// EnqueueTxP50Ms and EnqueueTxP99Ms are, for Latency and Burst, the
	// producer transactions' own duration (before Begin to Commit
	// returned) while the system dispatches.
	EnqueueTxP50Ms float64 `json:"enqueue_tx_p50_ms,omitempty"`
	EnqueueTxP99Ms float64 `json:"enqueue_tx_p99_ms,omitempty"`
	// Duplicates counts repeated arrivals of a message.
	Duplicates int64 `json:"duplicates"`
	// Error is why the run failed; its figures are then meaningless.
	Error string `json:"error,omitempty"`
}

// OK reports whether the run succeeded.
func (r Result) OK() bool { return r.Error == "" }
