// Package pgstore is the PostgreSQL outbox store.
package pgstore
