module github.com/reliar/reliar/store/mysqlstore

go 1.26.0

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/google/uuid v1.6.0
	github.com/reliar/reliar v0.0.0
	go.uber.org/goleak v1.3.0
)

require filippo.io/edwards25519 v1.2.0 // indirect

replace github.com/reliar/reliar => ../..
