//go:build unix

package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fdChildEnv makes TestHelperFDFloodGateway run a gateway under a low
// open-file limit for TestFinding1_FloodLeavesFileDescriptors.
const fdChildEnv = "SWITCHBOARD_GATEWAY_FD_CHILD"

// fdChildLimit is the child's RLIMIT_NOFILE.
const fdChildLimit = 512

// TestHelperFDFloodGateway is the gateway process of
// TestFinding1_FloodLeavesFileDescriptors; without fdChildEnv it does
// nothing. It lowers its open-file limit, starts a gateway with the
// default limits, prints "gateway <addr>", then answers each "files" line
// on its stdin with "files <n>": how many of 64 files it could open, as a
// bridge or the store would. It stops the gateway when stdin ends.
func TestHelperFDFloodGateway(t *testing.T) {
	if os.Getenv(fdChildEnv) != "1" {
		return
	}
	lim := syscall.Rlimit{Cur: fdChildLimit, Max: fdChildLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Port = 0
	s := New(cfg, Deps{StateDir: t.TempDir()})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("gateway %s\n", s.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if in.Text() != "files" {
			continue
		}
		var opened []*os.File
		for range 64 {
			f, err := os.Open(os.DevNull)
			if err != nil {
				break
			}
			opened = append(opened, f)
		}
		fmt.Printf("files %d\n", len(opened))
		for _, f := range opened {
			f.Close()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.Stop(ctx)
}

// TestFinding1_FloodLeavesFileDescriptors (issue 22, finding 1), in a
// child process whose open-file limit is 512: 600 keep-alive connections
// from six addresses, each after one GET /healthz, leave the process able to open files and
// answer /healthz on a new connection. Before, they filled the fd table:
// accept looped on "too many open files", /healthz timed out, and the
// Telegram bridge could not open a socket.
func TestFinding1_FloodLeavesFileDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFDFloodGateway$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildEnv+"=1", "TMPDIR="+t.TempDir())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewScanner(stdout)
	defer func() {
		stdin.Close()
		for out.Scan() {
		}
		_ = cmd.Wait()
	}()
	line := func() string {
		if !out.Scan() {
			t.Fatalf("the gateway process ended: %v", out.Err())
		}
		return out.Text()
	}
	var addr string
	for !strings.HasPrefix(addr, "gateway ") {
		addr = line()
	}
	addr = strings.TrimPrefix(addr, "gateway ")

	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	// From six addresses, each under the per-address cap: the total is
	// what they hit.
	for i := range 600 {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%6))}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			continue // refused: the gateway's business
		}
		flood = append(flood, c)
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
	}

	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := roundTrip(c, bufio.NewReader(c), "/healthz", nil)
	c.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz after the flood: %v, %v; want 200", resp, err)
	}
	if _, err := io.WriteString(stdin, "files\n"); err != nil {
		t.Fatal(err)
	}
	var got string
	for !strings.HasPrefix(got, "files ") {
		got = line()
	}
	if n, _ := strconv.Atoi(strings.TrimPrefix(got, "files ")); n != 64 {
		t.Errorf("after the flood the gateway's process opened %d of 64 files; the rest of the process needs descriptors too", n)
	}
}
