module github.com/reliar/reliar/chaos

go 1.26.0

require (
	github.com/google/uuid v1.6.0
	github.com/jackc/pgx/v5 v5.12.0
	github.com/nats-io/nats.go v1.55.0
	github.com/reliar/reliar v0.0.0
	github.com/reliar/reliar/store/pgstore v0.0.0
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	github.com/reliar/reliar/publisher/natspub v0.0.0
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace (
	github.com/reliar/reliar => ..
	github.com/reliar/reliar/observability/otelobs => ../observability/otelobs
	github.com/reliar/reliar/publisher/internal/cetest => ../publisher/internal/cetest
	github.com/reliar/reliar/publisher/natspub => ../publisher/natspub
	github.com/reliar/reliar/store/pgstore => ../store/pgstore
)
