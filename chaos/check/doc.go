// Package check decides whether a chaos run kept Reliar's delivery
// guarantee. Given the messages the producer committed, every publish
// attempt a sink saw without deduplication, the dispatchers' events and the
// outbox table after the run healed and drained, Check reports messages
// lost, duplicate attempts attributed to the four duplicate windows of the
// dispatcher, duplicates no window explains, per-key order violations and
// rows left leased.
//
// Attribution works per message. Its claims (the events claimed and
// reclaimed) split its history into sessions, one per holder. Each
// duplicate attempt at the sink needs a session that may have reached the
// broker and was followed by another claim of the same row; the kind of
// that hand-over names the window:
//
//   - after a lapsed reclaim (the earlier lease ran out): window 3 when the
//     holder let the row go at the drain (its publish cut off, or the row
//     left to its lease); window 1 when its publish had returned before
//     the reclaim (the completion never landed), or when it crashed
//     (reported nothing more) or abandoned the row after failing outcome
//     writes for a lease; window 4 when its publish had failed before the
//     reclaim; window 2 when it was still alive and its publish still
//     running (a slow or stalled worker);
//   - after a fresh claim (the earlier holder let go of the row): window 4
//     when its publish failed (an ambiguous outcome: the broker may have
//     stored the message while the acknowledgement was lost or late);
//     window 3 when the drain cut its publish off.
//
// A session that released its row without publishing explains nothing. A
// duplicate left over once every such hand-over is used is unattributed:
// the run broke the guarantee.
package check
