// Package heartbeat will run scheduled work: the periodic heartbeat turn of
// each agent and user-defined cron jobs (github.com/robfig/cron/v3). Both
// enter through the queue dispatcher like any other turn.
//
// Until the scheduler lands this package is intentionally empty.
package heartbeat
