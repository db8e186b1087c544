package discord_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
)

// waitSrv waits for a condition on the fake's state.
func waitSrv(t *testing.T, srv *discordtest.Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bridgetest.WaitFor)
	defer cancel()
	if err := srv.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestDroppedConnectionResumesAndReplays(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	r.receive(t, srv.DirectMessage(ada, "before"), 1)
	srv.DropConnection()
	// Pushed while the bot is away: the resume replays it.
	srv.PushMessageCreate(srv.DirectMessage(ada, "while away"))
	waitSrv(t, srv, "a resume", func() bool { return srv.Resumes() == 1 })
	if !r.sink.Eventually(func() bool { return len(r.sink.Inbound()) == 2 }) {
		t.Fatalf("the missed message was not replayed: %d", len(r.sink.Inbound()))
	}
	if got := r.sink.Inbound()[1].Message.Body; got != "while away" {
		t.Errorf("replayed %q", got)
	}
	if srv.Identifies() != 1 || r.b.Identifies() != 1 {
		t.Errorf("identifies: fake %d bridge %d, want 1 (a resume needs none)", srv.Identifies(), r.b.Identifies())
	}
	r.connected(t)
}

func TestReconnectRequestResumes(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	srv.SendReconnect()
	waitSrv(t, srv, "a resume", func() bool { return srv.Resumes() == 1 })
	closes := srv.Closes()
	if len(closes) != 1 || closes[0].ByServer || closes[0].Code == 1000 || closes[0].Code == 1001 {
		t.Errorf("closes = %+v, want the client to close keeping the session (not 1000/1001)", closes)
	}
}

func TestInvalidSessionIdentifiesAfresh(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	srv.SendInvalidSession(false)
	waitSrv(t, srv, "a second identify", func() bool { return srv.Identifies() == 2 })
	if srv.Resumes() != 0 {
		t.Errorf("resumed %d times after op 9 d:false", srv.Resumes())
	}
	r.connected(t)
	r.receive(t, srv.DirectMessage(ada, "after"), 1)
}

func TestResumableCloseCodesResume(t *testing.T) {
	srv := discordtest.New(t)
	r := newRig(t, srv, nil)
	r.connected(t)
	srv.CloseWith(4000, "")
	waitSrv(t, srv, "a resume", func() bool { return srv.Resumes() == 1 })
	// 4009 (session timed out) ends the session: a new identify follows.
	srv.CloseWith(4009, "")
	waitSrv(t, srv, "a second identify", func() bool { return srv.Identifies() == 2 })
}

func TestZombieConnectionIsReplaced(t *testing.T) {
	srv := discordtest.New(t, discordtest.WithHeartbeatInterval(30*time.Millisecond))
	r := newRig(t, srv, nil)
	r.connected(t)
	waitSrv(t, srv, "a heartbeat", func() bool { return srv.Heartbeats() > 0 })
	srv.SetHeartbeatACKs(false)
	waitSrv(t, srv, "the client closing the zombie", func() bool {
		return slices.ContainsFunc(srv.Closes(), func(c discordtest.Close) bool { return !c.ByServer })
	})
	srv.SetHeartbeatACKs(true)
	waitSrv(t, srv, "a resume", func() bool { return srv.Resumes() >= 1 })
	for _, c := range srv.Closes() {
		if !c.ByServer && (c.Code == 1000 || c.Code == 1001) {
			t.Errorf("the zombie was closed with %d, which ends the session", c.Code)
		}
	}
	r.connected(t)
}

func TestMissingHelloIsGivenUp(t *testing.T) {
	srv := discordtest.New(t)
	srv.WithholdHello(true)
	var sleeps sync.WaitGroup
	sleeps.Add(1)
	once := sync.Once{}
	r := newRig(t, srv, func(o *discord.Options) {
		o.HelloTimeout = 50 * time.Millisecond
		o.Sleep = func(ctx context.Context, _ time.Duration) bool {
			once.Do(func() { srv.WithholdHello(false); sleeps.Done() })
			return ctx.Err() == nil
		}
	})
	r.connected(t)
	sleeps.Wait()
	if st := r.b.Status(); !strings.Contains(st.LastError, "no Hello") {
		t.Errorf("last error %q, want the missing Hello named", st.LastError)
	}
	if srv.Connections() != 2 {
		t.Errorf("%d connections, want the silent one and the next", srv.Connections())
	}
}

func TestTerminalCloseCodesStopReconnecting(t *testing.T) {
	for _, tc := range []struct {
		code discordtest.CloseCode
		want string
	}{
		{4004, "channels.discord.token"},
		{4010, "shard"},
		{4011, "sharding"},
		{4012, "API version"},
		{4013, "intents"},
		{4014, "Message Content Intent"},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			srv := discordtest.New(t)
			r := newRig(t, srv, nil)
			r.connected(t)
			srv.CloseWith(tc.code, "")
			var err error
			select {
			case err = <-r.done:
			case <-time.After(bridgetest.WaitFor):
				t.Fatal("the bridge kept running after a terminal close code")
			}
			r.done <- err
			st := r.b.Status()
			if err == nil || st.State != bridges.StateBadCredentials || !strings.Contains(st.LastError, tc.want) {
				t.Errorf("Start = %v; status %s %q, want bad-credentials naming %q", err, st.State, st.LastError, tc.want)
			}
			if n := srv.Connections(); n != 1 {
				t.Errorf("%d connections, want none after the terminal close", n)
			}
		})
	}
}

// virtualClock is a Sleep that advances virtual time instead of waiting,
// running at (once) the first time the total passes the mark.
type virtualClock struct {
	mu      sync.Mutex
	elapsed time.Duration
	mark    time.Duration
	at      func()
	delays  []time.Duration
}

func (c *virtualClock) sleep(ctx context.Context, d time.Duration) bool {
	c.mu.Lock()
	c.elapsed += d
	c.delays = append(c.delays, d)
	var run func()
	if c.at != nil && c.elapsed >= c.mark {
		run, c.at = c.at, nil
	}
	c.mu.Unlock()
	if run != nil {
		run()
	}
	return ctx.Err() == nil
}

func (c *virtualClock) arm(mark time.Duration, at func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.elapsed, c.mark, c.at, c.delays = 0, mark, at, nil
}

// TestTenMinuteOutage is matrix row 15: while the gateway is down (every
// connection cut with 1006) for 10 minutes of virtual time, the bridge
// makes fewer than 20 attempts, switches from resuming to identifying
// after 3 failed resumes, and recovers when Discord comes back.
func TestTenMinuteOutage(t *testing.T) {
	srv := discordtest.New(t)
	clock := &virtualClock{}
	r := newRig(t, srv, func(o *discord.Options) { o.Sleep = clock.sleep })
	r.connected(t)
	r.receive(t, srv.DirectMessage(ada, "before"), 1)
	before := srv.Connections()
	during := make(chan int, 1)
	clock.arm(10*time.Minute, func() {
		during <- srv.Connections() - before
		srv.SetOutage(false)
	})
	srv.SetOutage(true)
	// Written while the bot is away; the new session does not replay it,
	// so the bridge fetches it.
	srv.PushMessageCreate(srv.DirectMessage(ada, "while down"))

	var attempts int
	select {
	case attempts = <-during:
	case <-time.After(bridgetest.WaitFor):
		t.Fatal("the outage never reached 10 virtual minutes")
	}
	if attempts >= 20 || attempts < 5 {
		t.Errorf("%d connection attempts in 10 minutes of outage, want fewer than 20 (and real retrying)", attempts)
	}
	clock.mu.Lock()
	delays := slices.Clone(clock.delays)
	clock.mu.Unlock()
	for _, d := range delays {
		if d > time.Minute {
			t.Errorf("a backoff of %s, over the 60 s cap", d)
		}
	}
	// Recovered: after 3 failed resumes the session was dropped, so the
	// way back is a fresh identify.
	waitSrv(t, srv, "a fresh identify", func() bool { return srv.Identifies() == 2 })
	r.connected(t)
	if srv.Resumes() != 0 {
		t.Errorf("%d resumes, want none once 3 resumes had failed", srv.Resumes())
	}
	if !r.sink.Eventually(func() bool { return len(r.sink.Inbound()) >= 2 }) {
		t.Fatal("the message written during the outage was not backfilled")
	}
	if got := r.sink.Inbound()[1].Message.Body; got != "while down" {
		t.Errorf("backfilled %q", got)
	}
	r.receive(t, srv.DirectMessage(ada, "back"), 3)
	if st := r.b.Status(); st.State != bridges.StateConnected {
		t.Errorf("state %s after recovery", st.State)
	}
}

func TestThirdFailedResumeLeadsToIdentify(t *testing.T) {
	for _, tc := range []struct {
		failures  int
		wantIdent int
		wantRes   int
	}{
		{2, 1, 1}, // two failed resumes, the third works
		{3, 2, 0}, // three failed: identify afresh
	} {
		srv := discordtest.New(t)
		clock := &virtualClock{}
		r := newRig(t, srv, func(o *discord.Options) {
			o.Sleep = func(ctx context.Context, d time.Duration) bool {
				// The first sleep follows the outage's cut of connection 1;
				// each later one a failed resume. End the outage once
				// tc.failures resumes have failed.
				if srv.Connections() >= 1+tc.failures {
					srv.SetOutage(false)
				}
				return clock.sleep(ctx, d)
			}
		})
		r.connected(t)
		srv.SetOutage(true)
		waitSrv(t, srv, "recovery", func() bool { return srv.Resumes()+srv.Identifies() >= 2 })
		r.connected(t)
		if srv.Identifies() != tc.wantIdent || srv.Resumes() != tc.wantRes {
			t.Errorf("after %d failed resumes: %d identifies, %d resumes; want %d, %d", tc.failures, srv.Identifies(), srv.Resumes(), tc.wantIdent, tc.wantRes)
		}
		r.stop()
	}
}

func TestIdentifyBudgetIsKept(t *testing.T) {
	srv := discordtest.New(t, discordtest.WithSessionStartLimit(6))
	var b atomic.Pointer[discord.Bridge]
	r := newRig(t, srv, func(o *discord.Options) {
		o.Sleep = func(ctx context.Context, _ time.Duration) bool {
			if b := b.Load(); b != nil && strings.Contains(b.Status().LastError, "identifies left") {
				<-ctx.Done()
				return false
			}
			return ctx.Err() == nil
		}
	})
	b.Store(r.b)
	r.connected(t)
	srv.SendInvalidSession(false)
	if !bridgetest.Eventually(func() bool { return strings.Contains(r.b.Status().LastError, "identifies left") }) {
		t.Fatalf("status %+v, want the exhausted budget named", r.b.Status())
	}
	if srv.Identifies() != 1 || r.b.Identifies() != 1 {
		t.Errorf("identified %d times with 5 left of the budget, want no second identify", srv.Identifies())
	}
}

// gatedTransport holds GET /channels/{id}/messages (the backfill) until
// release is closed.
type gatedTransport struct {
	base    http.RoundTripper
	release chan struct{}
	waiting atomic.Int32
}

func (g *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/messages") {
		g.waiting.Add(1)
		select {
		case <-g.release:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return g.base.RoundTrip(req)
}

// TestSlowBackfillKeepsHeartbeating: a backfill stuck on REST does not
// stop the read goroutine (ACKs keep arriving, no zombie close), and a
// live message arriving meanwhile waits for the backfilled ones so the
// channel stays in order.
func TestSlowBackfillKeepsHeartbeating(t *testing.T) {
	srv := discordtest.New(t, discordtest.WithHeartbeatInterval(20*time.Millisecond))
	gate := &gatedTransport{base: srv.Client().Transport, release: make(chan struct{})}
	r := newRig(t, srv, func(o *discord.Options) { o.HTTPClient = &http.Client{Transport: gate} })
	r.connected(t)
	r.receive(t, srv.DirectMessage(ada, "before"), 1)
	before := srv.Connections()
	srv.SetOutage(true)
	srv.PushMessageCreate(srv.DirectMessage(ada, "while down"))
	// Three failed resumes end the session; the fresh identify backfills.
	waitSrv(t, srv, "failed resumes", func() bool { return srv.Connections() >= before+4 })
	srv.SetOutage(false)
	waitSrv(t, srv, "a fresh identify", func() bool { return srv.Identifies() == 2 })
	if !bridgetest.Eventually(func() bool { return gate.waiting.Load() > 0 }) {
		t.Fatal("no backfill request")
	}
	srv.PushMessageCreate(srv.DirectMessage(ada, "live"))
	beats := srv.Heartbeats()
	waitSrv(t, srv, "heartbeats during the backfill", func() bool { return srv.Heartbeats() >= beats+5 })
	for _, c := range srv.Closes() {
		if c.Code == 4900 {
			t.Fatalf("zombie close while the backfill ran: %+v", srv.Closes())
		}
	}
	if n := len(r.sink.Inbound()); n != 1 {
		t.Fatalf("%d messages submitted before the backfill finished, want the live one held", n)
	}
	close(gate.release)
	if !r.sink.Eventually(func() bool { return len(r.sink.Inbound()) >= 3 }) {
		t.Fatalf("got %d messages after the backfill, want 3", len(r.sink.Inbound()))
	}
	var bodies []string
	for _, in := range r.sink.Inbound() {
		bodies = append(bodies, in.Message.Body)
	}
	if want := []string{"before", "while down", "live"}; !slices.Equal(bodies, want) {
		t.Errorf("order %q, want %q", bodies, want)
	}
}
