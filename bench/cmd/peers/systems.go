package main

import (
	"slices"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/jetstreamrun"
	"github.com/reliar/reliar/bench/internal/rawsql"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/report"
	"github.com/reliar/reliar/bench/internal/riverrun"
	"github.com/reliar/reliar/bench/internal/watermillrun"
)

// lineup is the systems of every scenario of one run.
type lineup struct {
	drain, enqueueTx, latency, jetstream, burst []harness.System
}

// quickSystems are the systems the quick line compares; the quick run runs
// exactly these.
func quickSystems(c config) report.QuickSystems {
	return report.QuickSystems{
		Reliar:                 reliarrun.Defaults().Name,
		Raw:                    rawsql.Pinned().Name,
		Raw4Conns:              rawsql.FourConns().Name,
		RawPipelined:           rawsql.PipelinedLoop().Name,
		RawMinimal:             rawsql.Minimal().Name,
		Watermill:              watermillrun.Tuned().Name,
		River:                  riverrun.Tuned().Name,
		ReliarJetStream:        jetstreamrun.Reliar(c.natsURL, reliarrun.Defaults(), jetstreamrun.File).Name,
		HandJetStream:          jetstreamrun.HandWritten(c.natsURL, jetstreamrun.CloudEvents, jetstreamrun.File).Name,
		HandJetStreamOneHeader: jetstreamrun.HandWritten(c.natsURL, jetstreamrun.MsgIDOnly, jetstreamrun.File).Name,
		ReliarSQLite:           reliarrun.SQLite().Name,
		RiverSQLite:            riverrun.SQLiteTuned().Name,
		ReliarSQLiteDemo:       reliarrun.SQLiteDemo().Name,
	}
}

// systems returns the systems of the mode, filtered by -only and
// -scenarios.
func systems(c config) lineup {
	var l lineup
	var named lineup // variants that run only when named with -only
	url := c.natsURL
	rawLoops := []harness.System{rawsql.Pinned().System(), rawsql.FourConns().System(), rawsql.PipelinedLoop().System(), rawsql.Minimal().System()}
	if c.quick {
		l.drain = append([]harness.System{
			reliarrun.Defaults().System(), riverrun.Tuned().System(), watermillrun.Tuned().System(),
		}, rawLoops...)
		l.drain = append(l.drain, reliarrun.SQLite().System(), riverrun.SQLiteTuned().System())
		l.enqueueTx = []harness.System{
			reliarrun.Defaults().System(), riverrun.Tuned().System(), watermillrun.Tuned().System(), rawsql.Minimal().System(),
		}
		l.latency = []harness.System{reliarrun.Defaults().System(), riverrun.Tuned().System()}
		l.jetstream = []harness.System{
			jetstreamrun.Reliar(url, reliarrun.Defaults(), jetstreamrun.File),
			jetstreamrun.HandWritten(url, jetstreamrun.CloudEvents, jetstreamrun.File),
			jetstreamrun.HandWritten(url, jetstreamrun.MsgIDOnly, jetstreamrun.File),
		}
		l.burst = []harness.System{reliarrun.SQLite().System(), reliarrun.SQLiteDemo().System()}
	} else {
		sqlite := []harness.System{reliarrun.SQLite().System(), reliarrun.SQLiteDemo().System(), riverrun.SQLiteTuned().System()}
		pg := []harness.System{
			reliarrun.Defaults().System(), reliarrun.DefaultsBatch().System(),
			reliarrun.Batch512().System(), reliarrun.Batch512Overlap().System(),
			riverrun.Defaults().System(), riverrun.Tuned().System(),
			watermillrun.Defaults().System(), watermillrun.Tuned().System(),
		}
		// The raw loops are throughput ceilings; they have no wake-up
		// design whose latency would mean anything.
		l.latency = append(slices.Clone(pg), sqlite...)
		l.drain = append(append(slices.Clone(pg), rawLoops...), sqlite...)
		l.enqueueTx = []harness.System{
			reliarrun.Defaults().System(), riverrun.Tuned().System(), watermillrun.Tuned().System(),
			rawsql.Minimal().System(), rawsql.Pinned().System(),
			reliarrun.SQLite().System(), riverrun.SQLiteTuned().System(),
		}
		l.jetstream = []harness.System{
			jetstreamrun.Reliar(url, reliarrun.Defaults(), jetstreamrun.File),
			jetstreamrun.Reliar(url, reliarrun.Batch512(), jetstreamrun.File),
			jetstreamrun.HandWritten(url, jetstreamrun.CloudEvents, jetstreamrun.File),
			jetstreamrun.HandWritten(url, jetstreamrun.MsgIDOnly, jetstreamrun.File),
			// What tells client work from server storage: the same
			// runs on a stream in memory, and the pipeline on core NATS.
			jetstreamrun.Reliar(url, reliarrun.Defaults(), jetstreamrun.Memory),
			jetstreamrun.HandWritten(url, jetstreamrun.CloudEvents, jetstreamrun.Memory),
			jetstreamrun.HandWritten(url, jetstreamrun.CloudEvents, jetstreamrun.Core),
		}
		l.burst = sqlite
		// The store option variants and the MaxInFlight experiments, and
		// the burst on PostgreSQL, run only when named.
		for _, v := range reliarrun.Options() {
			named.drain = append(named.drain, v.System())
			named.latency = append(named.latency, v.System())
			named.enqueueTx = append(named.enqueueTx, v.System())
			named.jetstream = append(named.jetstream, jetstreamrun.Reliar(url, v, jetstreamrun.File))
		}
		// Both SQLite systems on one connection, as River advises.
		oneConn := []harness.System{reliarrun.SQLiteOneConn().System(), riverrun.SQLiteTunedOneConn().System(), reliarrun.SQLiteDemoTwoConns().System(), reliarrun.SQLiteDemoPoll5ms().System(), reliarrun.SQLiteDemoWake20ms().System(), reliarrun.SQLiteDemoSyncCommit().System()}
		named.drain = append(named.drain, oneConn...)
		named.latency = append(named.latency, oneConn...)
		named.enqueueTx = append(named.enqueueTx, oneConn...)
		named.burst = append([]harness.System{reliarrun.Defaults().System(), reliarrun.WithoutHandoff().System(), riverrun.Tuned().System()}, oneConn...)
	}
	pick := func(scenario string, all, extra []harness.System) []harness.System {
		if !c.scenarios[scenario] {
			return nil
		}
		if len(c.only) == 0 {
			return all
		}
		var out []harness.System
		for _, s := range append(all, extra...) {
			if slices.Contains(c.only, s.Name) && !slices.ContainsFunc(out, func(o harness.System) bool { return o.Name == s.Name }) {
				out = append(out, s)
			}
		}
		return out
	}
	return lineup{
		drain:     pick("drain", l.drain, named.drain),
		enqueueTx: pick("enqueue-tx", l.enqueueTx, named.enqueueTx),
		latency:   pick("latency", l.latency, named.latency),
		jetstream: pick("jetstream", l.jetstream, named.jetstream),
		burst:     pick("burst", l.burst, named.burst),
	}
}

// names lists the names of systems.
func names(systems []harness.System) []string {
	var out []string
	for _, s := range systems {
		out = append(out, s.Name)
	}
	return out
}
