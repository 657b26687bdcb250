// Package sqlitestore is the SQLite outbox store, Reliar's embedded default.
package sqlitestore
