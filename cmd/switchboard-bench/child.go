package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// buildBinary builds ./cmd/switchboard of the module at root ("" means the
// working directory) as `make build` does, into dir.
func buildBinary(ctx context.Context, dir, root string) (string, error) {
	out := filepath.Join(dir, "switchboard")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/switchboard")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building switchboard (run from the repository root, or pass -bin): %v\n%s", err, b)
	}
	return out, nil
}

// child is a running `switchboard run`.
type child struct {
	cmd     *exec.Cmd
	log     *syncBuffer
	started time.Time
	done    chan error
}

// syncBuffer is the children's log: written by exec's copying goroutine,
// read by the bench when something fails.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns the log, at most its last 64 KiB (a chaos run's log of
// hundreds of restarts is long; the end says what went wrong).
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	if len(b) > 64<<10 {
		b = b[len(b)-64<<10:]
	}
	return string(b)
}

// tail returns the last n bytes of the log.
func (s *syncBuffer) tail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b.Bytes()
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Bytes returns a copy of the whole log.
func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// childLogLevel is the child's --log-level (the -log-level flag).
var childLogLevel = "info"

// startChild runs bin with the configuration at cfgPath and env, appending
// its output to log.
func startChild(bin, cfgPath string, env []string, log *syncBuffer) (*child, error) {
	c := &child{log: log, done: make(chan error, 1)}
	c.cmd = exec.Command(bin, "run", "--config", cfgPath, "--log-format", "json", "--log-level", childLogLevel)
	c.cmd.Env = env
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.started = time.Now()
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { c.done <- c.cmd.Wait() }()
	return c, nil
}

// waitReady polls /readyz until it answers 200 and returns how long after
// exec that was.
func (c *child) waitReady(ctx context.Context, base string, limit time.Duration) (time.Duration, error) {
	cl := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.After(limit)
	// Every millisecond: fine enough for a 20 ms target without a busy
	// loop stealing one of the machine's cores from the child.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := cl.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(c.started), nil
			}
		}
		select {
		case err := <-c.done:
			c.done <- err
			return 0, fmt.Errorf("switchboard exited before it was ready (%v):\n%s", err, c.log.String())
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-deadline:
			return 0, fmt.Errorf("switchboard was not ready within %v:\n%s", limit, c.log.String())
		case <-tick.C:
		}
	}
}

// stop interrupts the child and waits for it. Stopping a child that has
// exited returns at once. A child that fails to stop cleanly is reported
// with the end of its log, which says why.
func (c *child) stop(limit time.Duration) error {
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-c.done:
		c.done <- err
		if err != nil {
			return fmt.Errorf("%w; its log ends:\n%s", err, c.log.tail(4<<10))
		}
		return nil
	case <-time.After(limit):
		_ = c.cmd.Process.Kill()
		c.done <- <-c.done
		return fmt.Errorf("switchboard did not stop within %v; killed; its log ends:\n%s", limit, c.log.tail(4<<10))
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	err := <-c.done
	c.done <- err
}

// memory is a process's resident memory from /proc/<pid>/status.
type memory struct {
	RSSKB     int64 `json:"vmRSSKiB"`
	PeakRSSKB int64 `json:"vmHWMKiB"`
	// AnonKB is the process's own memory (heap, stacks, SQLite's page
	// cache); FileKB the pages of the binary and other files it touched.
	AnonKB  int64 `json:"rssAnonKiB"`
	FileKB  int64 `json:"rssFileKiB"`
	Threads int64 `json:"threads"`
}

func readMemory(pid int) (memory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return memory{}, fmt.Errorf("reading the child's memory needs Linux /proc: %w", err)
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.Fields(v + " 0")[0], 10, 64)
		switch k {
		case "VmRSS":
			m.RSSKB = n
		case "VmHWM":
			m.PeakRSSKB = n
		case "RssAnon":
			m.AnonKB = n
		case "RssFile":
			m.FileKB = n
		case "Threads":
			m.Threads = n
		}
	}
	return m, sc.Err()
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, which
// Linux fixes at 100 on every architecture Go supports.
const userHZ = 100

// readCPU is the CPU time a process has used, user and system, from
// /proc/<pid>/stat.
func readCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading the child's CPU time needs Linux /proc: %w", err)
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime + stime (fields 14 and 15) from the contents
// of /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// hold spaces and parentheses itself, so the fields are counted after its
// last ')'.
func parseProcStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat %.40q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat %.40q: %d fields, want at least 15", stat, len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc stat: CPU time %q is not a count of ticks", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// raiseFileLimit lifts the soft open-files limit to the hard one, for many
// connections; the child inherits it.
func raiseFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	l.Cur = l.Max
	_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	return l.Cur
}
