package sqlstore

// MigrateAt is migrateAt for the external tests.
var MigrateAt = migrateAt
