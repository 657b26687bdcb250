package storeurl

// drivers lists every store the CLI can open by URL. Adding a store is one
// file implementing driver and one line here.
var drivers = []driver{
	postgresDriver{},
	sqliteDriver{},
	mysqlDriver{},
}
