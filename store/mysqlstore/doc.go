// Package mysqlstore is the MariaDB outbox store.
package mysqlstore
