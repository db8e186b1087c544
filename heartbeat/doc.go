// Package heartbeat runs scheduled work: each agent's periodic heartbeat
// turn (openclaw-facts §6.1–6.3) and cron jobs (§6.5, on
// github.com/robfig/cron/v3 expressions). Both enter through the queue
// dispatcher like any other turn; nothing here calls the agent.
//
// A heartbeat is submitted as a heartbeat-kind turn, which the dispatcher
// drops rather than queues when the session is busy, so it never delays or
// interrupts a user. The Runner applies OpenClaw's skip rules (disabled,
// quiet-hours, requests-in-flight, empty-heartbeat-file, no-tasks-due,
// alerts-disabled, duplicate), strips HEARTBEAT_OK from the reply (core's
// reply package, in heartbeat mode) and delivers only alerts, to the
// configured target. Its schedule has a per-agent phase (Phase, NextDue) so
// agents do not all fire at once, and wake requests are coalesced.
//
// Schedules (Schedule) are `at`, `every` and `cron`; the store claims each
// scheduled instant once (store.Cron), so a restart neither runs a job twice
// nor skips one silently.
package heartbeat
