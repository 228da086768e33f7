// Package memory is a paykit.Store kept in maps: for tests, demos and hosts
// that embed paykit without a database. Nothing survives the process.
//
// Atomicity: every call, and every InTx, runs under one mutex, so
// transactions are fully serialized. Each write inside InTx records an undo
// step; when fn returns an error (or panics) the steps run in reverse and the
// maps are as they were. Values are copied on the way in and out, so callers
// never share memory with the Store.
package memory
