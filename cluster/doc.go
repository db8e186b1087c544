// Package cluster lets several Switchboard instances share one database
// (store.driver: postgres) as one deployment. A [Member] records its
// instance in the store's registry, heartbeats it, and holds leases
// (store.Leases) for the work only one instance may do at a time: each
// platform connection that must be unique, started and stopped through
// the bridge supervisor. A lease carries a fencing token, so a write made
// under a lease that was since taken over is refused by the store; and a
// member stops the work of a lease it cannot renew before that lease can
// expire, so a partitioned instance steps back by itself.
//
// With the SQLite store there is one instance, and the same code holds
// every lease at once.
package cluster
