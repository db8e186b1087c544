package linebridge_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client is the platform's side of the wire: a person at a terminal,
// speaking the protocol over a real TCP connection. Every read waits at
// most bridgetest.WaitFor, by a read deadline.
type client struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

// dial connects to the bridge; the connection is closed at the end of the
// test.
func dial(t *testing.T, addr net.Addr) *client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr.String(), bridgetest.WaitFor)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// hello says who is talking and returns the chat id the bridge welcomes
// the connection with.
func (c *client) hello(name string) string {
	c.t.Helper()
	c.send("HELLO " + name)
	welcome := c.line()
	chat, ok := strings.CutPrefix(welcome, "WELCOME ")
	if !ok {
		c.t.Fatalf("after HELLO: got %q, want WELCOME <chat>", welcome)
	}
	return chat
}

// send writes one line.
func (c *client) send(line string) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(bridgetest.WaitFor))
	if _, err := io.WriteString(c.nc, line+"\n"); err != nil {
		c.t.Fatalf("sending %q: %v", line, err)
	}
}

// line reads the next line the bridge sent, skipping typing indicators,
// which come whenever a run starts.
func (c *client) line() string {
	c.t.Helper()
	for {
		l, err := c.read()
		if err != nil {
			c.t.Fatalf("reading a line: %v", err)
		}
		if l != "TYPING" {
			return l
		}
	}
}

// read reads one line, whatever it is.
func (c *client) read() (string, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(bridgetest.WaitFor))
	l, err := c.r.ReadString('\n')
	if err != nil {
		return l, err
	}
	return strings.TrimSuffix(l, "\n"), nil
}

// expect reads the next line and fails unless it is want.
func (c *client) expect(want string) {
	c.t.Helper()
	if got := c.line(); got != want {
		c.t.Fatalf("got line %q, want %q", got, want)
	}
}

// reply reads one reply message: its MSG lines, up to END. It returns the
// lines (without "MSG ") and the message id END gave.
func (c *client) reply() (lines []string, id string) {
	c.t.Helper()
	return c.replyFrom(c.line())
}

// replyFrom reads the rest of a reply whose first line is first. A reply
// message is written in one piece, so nothing comes between its lines.
func (c *client) replyFrom(first string) (lines []string, id string) {
	c.t.Helper()
	for l := first; ; l = c.line() {
		if text, ok := strings.CutPrefix(l, "MSG "); ok {
			lines = append(lines, text)
			continue
		}
		if id, ok := strings.CutPrefix(l, "END "); ok && len(lines) > 0 {
			return lines, id
		}
		c.t.Fatalf("reading a reply: got %q after %q", l, lines)
	}
}

// reply is one reply message as the client read it.
type reply struct {
	lines []string
	id    string
}

// last is the reply's last line: for the echo model, the message answered.
func (r reply) last() string { return r.lines[len(r.lines)-1] }

// await reads until the bridge has sent the acknowledgements want, in that
// order, and n replies, returned in order. Acknowledgements and replies
// interleave as they please: the run a message starts may answer it
// before the bridge has written its OK.
func (c *client) await(want []string, n int) []reply {
	c.t.Helper()
	var acks []string
	var replies []reply
	for len(acks) < len(want) || len(replies) < n {
		l := c.line()
		if strings.HasPrefix(l, "MSG ") {
			lines, id := c.replyFrom(l)
			replies = append(replies, reply{lines, id})
			continue
		}
		acks = append(acks, l)
	}
	if !slices.Equal(acks, want) || len(replies) != n {
		c.t.Fatalf("read acknowledgements %q and %d replies, want %q and %d", acks, len(replies), want, n)
	}
	return replies
}

// rest hangs up its sending side and reads what the bridge still sends
// until the bridge closes the connection.
func (c *client) rest() []string {
	c.t.Helper()
	if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for {
		l, err := c.read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			c.t.Fatalf("reading to the end: %v (so far %q)", err, out)
		}
		out = append(out, l)
	}
}

// waitFor fails the test unless cond holds within bridgetest.WaitFor
// (polled: for state nothing notifies about).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !bridgetest.Eventually(cond) {
		t.Fatalf("waiting for %s: not within %s", what, bridgetest.WaitFor)
	}
}

// testCtx is a context for one call that could hang.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), bridgetest.WaitFor)
	t.Cleanup(cancel)
	return ctx
}
