package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/store/pgstore"
)

// result is what one measurement found.
type result struct {
	drain      time.Duration
	hwmKiB     int64
	streamMsgs uint64
	exitCode   int
}

// sampleEvery is the interval of the memory and backlog samples.
const sampleEvery = time.Second

func measure(ctx context.Context, c config, stderr io.Writer) (res result, err error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return res, err
	}
	name := "relaymem_" + hex.EncodeToString(rnd[:])
	pool, err := pgxpool.New(ctx, c.dsn)
	if err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	cleanup := context.WithoutCancel(ctx)
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		return res, fmt.Errorf("create schema: %w", err)
	}
	defer func() {
		if _, derr := pool.Exec(cleanup, "DROP SCHEMA "+name+" CASCADE"); derr != nil {
			err = errors.Join(err, fmt.Errorf("drop schema: %w", derr))
		}
	}()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(name)); err != nil {
		return res, err
	}
	start := time.Now()
	if _, err := pool.Exec(ctx, `INSERT INTO `+name+`.outbox (id, message_type, payload)
SELECT gen_random_uuid(), 'bench.message', convert_to(repeat('x', 200), 'UTF8') FROM generate_series(1, $1)`, c.rows); err != nil {
		return res, fmt.Errorf("fill: %w", err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE "+name+".outbox"); err != nil {
		return res, fmt.Errorf("vacuum: %w", err)
	}
	fmt.Fprintf(stderr, "filled %d rows in %s\n", c.rows, time.Since(start).Round(time.Millisecond))

	nc, err := nats.Connect(c.natsURL)
	if err != nil {
		return res, fmt.Errorf("nats: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return res, err
	}
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: strings.ToUpper(name), Subjects: []string{name + ".>"}, Storage: jetstream.FileStorage})
	if err != nil {
		return res, fmt.Errorf("create stream: %w", err)
	}
	defer func() {
		if derr := js.DeleteStream(cleanup, strings.ToUpper(name)); derr != nil {
			err = errors.Join(err, fmt.Errorf("delete stream: %w", derr))
		}
	}()

	args := append([]string{"relay", "--database-url", c.dsn, "--schema", name, "--broker", c.natsURL,
		"--subject-prefix", name, "--metrics-addr", "127.0.0.1:0", "--no-maintainer", "--log-level", "error"}, c.args...)
	cmd := exec.Command(c.relay, args...)
	cmd.Stderr = stderr
	start = time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start relay: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopRelay := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		werr := <-exited
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			res.exitCode = ee.ExitCode()
			return nil
		}
		return werr
	}
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return res, errors.Join(ctx.Err(), stopRelay())
		case werr := <-exited:
			return res, fmt.Errorf("the relay exited early: %v", werr)
		case <-tick.C:
		}
		hwm, rss, err := memory(cmd.Process.Pid)
		if err != nil {
			return res, errors.Join(err, stopRelay())
		}
		res.hwmKiB = hwm
		var pending bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+name+`.outbox WHERE published_at IS NULL AND dead_at IS NULL)`).Scan(&pending); err != nil {
			return res, errors.Join(err, stopRelay())
		}
		fmt.Fprintf(stderr, "t=%4.0fs rss=%6.1f MiB hwm=%6.1f MiB\n", time.Since(start).Seconds(), float64(rss)/1024, float64(hwm)/1024)
		if !pending {
			break
		}
	}
	res.drain = time.Since(start)
	if err := stopRelay(); err != nil {
		return res, err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return res, err
	}
	res.streamMsgs = info.State.Msgs
	if res.streamMsgs != uint64(c.rows) {
		return res, fmt.Errorf("the stream holds %d messages, want %d", res.streamMsgs, c.rows)
	}
	return res, nil
}

// memory reads VmHWM and VmRSS, in KiB, from /proc/<pid>/status.
func memory(pid int) (hwm, rss int64, err error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmHWM":
			hwm = n
		case "VmRSS":
			rss = n
		}
	}
	return hwm, rss, sc.Err()
}
