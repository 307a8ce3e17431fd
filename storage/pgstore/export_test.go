package pgstore

// SchemaVersion is the schema this build writes, for the tests.
var SchemaVersion = schemaVersion
