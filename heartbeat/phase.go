package heartbeat

import (
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// Phase returns the agent's offset within interval: the first 4 bytes
// (big-endian) of sha256("<seed>:<agentID>"), mod the interval in
// milliseconds, as OpenClaw's resolveHeartbeatPhaseMs
// (src/infra/heartbeat-schedule.ts). Agents sharing an interval therefore
// fire at stable, spread-out moments instead of all at once, and the same
// seed (OpenClaw uses the device id) keeps each agent's moment across
// restarts.
//
// The result is whole milliseconds in [0, interval). An interval under a
// millisecond counts as one millisecond, so the phase is 0.
func Phase(seed, agentID string, interval time.Duration) time.Duration {
	sum := sha256.Sum256([]byte(seed + ":" + agentID))
	word := int64(binary.BigEndian.Uint32(sum[:4]))
	return time.Duration(word%phaseIntervalMs(interval)) * time.Millisecond
}

// NextDue returns the first instant strictly after now whose Unix
// milliseconds mod interval equals phase, as OpenClaw's
// computeNextHeartbeatPhaseDueMs: at exactly a due instant it returns the
// next one, a whole interval later. For an interval of a millisecond or
// more the result lies in (now, now+interval]; it is in now's location.
//
// Time is counted in whole milliseconds like OpenClaw: now's sub-millisecond
// part is dropped, interval is truncated to milliseconds (at least one),
// and phase is reduced mod interval, so a negative or oversized phase still
// names a slot.
func NextDue(now time.Time, interval, phase time.Duration) time.Time {
	iv := phaseIntervalMs(interval)
	nowMs := now.UnixMilli()
	delta := phaseFloorMod(phaseFloorMod(phase.Milliseconds(), iv)-phaseFloorMod(nowMs, iv), iv)
	if delta == 0 {
		delta = iv
	}
	return time.UnixMilli(nowMs + delta).In(now.Location())
}

// phaseIntervalMs is interval in whole milliseconds, at least 1.
func phaseIntervalMs(interval time.Duration) int64 {
	return max(interval.Milliseconds(), 1)
}

// phaseFloorMod is x mod m with the sign of m (m > 0), so instants before 1970
// land on the same slots as later ones.
func phaseFloorMod(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return r
}
