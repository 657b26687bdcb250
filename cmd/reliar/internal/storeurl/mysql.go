package storeurl

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/reliar/reliar/store/mysqlstore"
)

// mysqlConnectTimeout bounds each connection attempt unless the URL's
// timeout parameter says otherwise.
const mysqlConnectTimeout = 10 * time.Second

// mysqlDriver opens mysqlstore on mysql://user:password@host:port/database
// (mariadb:// too). Query parameters are passed to go-sql-driver/mysql;
// parseTime=true and loc=UTC, which the store needs, are always set.
type mysqlDriver struct{}

func (mysqlDriver) name() string      { return "mysql" }
func (mysqlDriver) schemes() []string { return []string{"mysql", "mariadb"} }

func (mysqlDriver) validate(u *url.URL, raw string) error {
	_, err := mysqlConfig(u, raw)
	return err
}

// mysqlConfig converts the URL to the driver's configuration.
func mysqlConfig(u *url.URL, raw string) (*mysql.Config, error) {
	if u.Host == "" {
		return nil, badURL(raw, "no host (want mysql://user:password@host:3306/database)")
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	var user string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			user = u.User.Username() + ":" + p
		} else {
			user = u.User.Username()
		}
	}
	dsn := fmt.Sprintf("%s@tcp(%s)/%s", user, addr, strings.TrimPrefix(u.Path, "/"))
	if u.RawQuery != "" {
		dsn += "?" + u.RawQuery
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, badURL(raw, "%v", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if !u.Query().Has("timeout") {
		cfg.Timeout = mysqlConnectTimeout
	}
	return cfg, nil
}

func (mysqlDriver) open(ctx context.Context, l Location, opts Options, scratch bool) (Backend, error) {
	if opts.AsyncCommit {
		return nil, fmt.Errorf("%w: the MariaDB store has no asynchronous commit; drop --async-commit", ErrBadOption)
	}
	if opts.Schema != "" && !scratch {
		return nil, fmt.Errorf("%w: MariaDB's schema is the URL's database; drop --schema", ErrBadOption)
	}
	cfg, err := mysqlConfig(l.url, l.raw)
	if err != nil {
		return nil, err
	}
	if !scratch && cfg.DBName == "" {
		return nil, badURL(l.raw, "no database name (want mysql://user:password@host:3306/database)")
	}
	b := &mysqlBackend{scratch: scratch, where: cfg.Addr, sqlBackend: sqlBackend{
		migrate: func(ctx context.Context, db *sql.DB) error { return mysqlstore.Migrate(ctx, db) },
		newStore: func(ctx context.Context, db *sql.DB) (sqlStore, error) {
			return mysqlstore.New(ctx, db, mysqlstore.WithLogger(opts.logger()))
		},
		hasMigrationsTable: `SELECT count(*) FROM information_schema.tables
			WHERE table_schema = DATABASE() AND table_name = 'reliar_migrations'`,
		timeArg: func(t time.Time) any { return t.UTC() },
	}}
	if scratch {
		name := "reliar_demo_" + randomHex(4)
		if err := createDatabase(ctx, cfg, name); err != nil {
			return nil, fmt.Errorf("create scratch database on %s: %w", l, err)
		}
		cfg.DBName = name
	}
	b.database = cfg.DBName
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, badURL(l.raw, "%v", err)
	}
	b.db = sql.OpenDB(connector)
	if opts.MaxConns > 0 {
		b.db.SetMaxOpenConns(opts.MaxConns)
	}
	if err := b.db.PingContext(ctx); err != nil {
		_ = b.Close(ctx)
		return nil, &ConnectError{Where: l.String(), Err: err}
	}
	return b, nil
}

// createDatabase creates a database with a connection to cfg's.
func createDatabase(ctx context.Context, cfg *mysql.Config, name string) error {
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE DATABASE "+backquote(name))
	return err
}

func backquote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

func (mysqlDriver) poolSize(Location) int { return 0 }

func (mysqlDriver) listenerConns() int { return 0 }

func (mysqlDriver) migrationSQL(opts Options) ([]SQLFile, error) {
	if opts.Schema != "" {
		return nil, fmt.Errorf("%w: MariaDB's schema is the URL's database; drop --schema", ErrBadOption)
	}
	return upFiles(mysqlstore.Migrations())
}

// mysqlBackend is a MariaDB database with the outbox in it.
type mysqlBackend struct {
	sqlBackend
	database string
	where    string
	scratch  bool
}

func (b *mysqlBackend) Describe() string { return fmt.Sprintf("mysql %s/%s", b.where, b.database) }

func (b *mysqlBackend) Dialect() Dialect {
	return Dialect{Bind: questionMarks, Table: backquote}
}

func (b *mysqlBackend) Close(ctx context.Context) error {
	var err error
	if b.scratch && b.db != nil {
		if _, dropErr := b.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+backquote(b.database)); dropErr != nil {
			err = fmt.Errorf("drop scratch database %s: %w", b.database, dropErr)
		}
	}
	if b.db != nil {
		if closeErr := b.db.Close(); err == nil {
			err = closeErr
		}
	}
	return err
}
