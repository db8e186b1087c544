// Package pgtest runs a throwaway PostgreSQL for tests: the server
// binaries of Debian's postgresql package (initdb, pg_ctl and psql under
// /usr/lib/postgresql/<version>/bin, the newest version first, else on
// PATH), a cluster in a temporary directory that listens on a free
// loopback port, and a fresh database per test.
//
// Without the binaries a test is skipped, except under CI=true, where it
// fails: CI installs the package (.ci/run). initdb refuses to run as root,
// so under root the cluster's files and processes belong to the user
// nobody.
//
// One cluster serves a test binary; it starts on the first Database call
// and is stopped by Stop, which the package's TestMain calls after m.Run.
// Every function is safe for concurrent use.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster is one running PostgreSQL server.
type Cluster struct {
	bin  string // the directory holding initdb, pg_ctl, psql
	dir  string // the data directory, also the socket directory
	port int
	cred *syscall.Credential // the user the server runs as; nil: ours
}

var (
	mu       sync.Mutex
	shared   *Cluster
	startErr error
)

// Database creates an empty database in the shared cluster, starting the
// cluster first if needed, and returns its URL (user postgres, trust
// authentication, sslmode=disable). The database is dropped when tb ends.
func Database(tb testing.TB) string {
	tb.Helper()
	c := sharedCluster(tb)
	name := "t_" + randomHex(8)
	if err := c.psql("postgres", "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		// Connections the test left open are cut.
		_ = c.psql("postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return c.URL(name)
}

// Shared returns the shared cluster, starting it if needed; it skips or
// fails tb as Database does.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	return sharedCluster(tb)
}

func sharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if shared == nil && startErr == nil {
		shared, startErr = Start()
	}
	if startErr != nil {
		if errors.Is(startErr, ErrNoBinaries) && os.Getenv("CI") != "true" {
			tb.Skipf("pgtest: %v", startErr)
		}
		tb.Fatalf("pgtest: %v", startErr)
	}
	return shared
}

// Stop stops the shared cluster, if it was started, and removes its files.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}

// ErrNoBinaries is wrapped by Start's error when PostgreSQL's server
// binaries are not installed.
var ErrNoBinaries = errors.New("PostgreSQL's server binaries (initdb, pg_ctl, psql) not found; install Debian's postgresql package")

// Start initialises and starts a new cluster. The caller must Stop it.
func Start() (*Cluster, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		if c.cred, err = nobody(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// A port that was free a moment ago can be taken by the time the
	// server binds it; try a few.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", c.port, dir)
		out, err := c.run("pg_ctl", "start", "-w", "-t", "60", "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts)
		if err == nil {
			return c, nil
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
		}
	}
}

// URL is the connection URL of database db.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

// Port is the loopback port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Stop stops the server at once (open connections are cut) and removes
// its files.
func (c *Cluster) Stop() {
	_, _ = c.run("pg_ctl", "stop", "-w", "-t", "30", "-m", "immediate", "-D", filepath.Join(c.dir, "data"))
	os.RemoveAll(c.dir)
}

// psql runs one SQL command against database db.
func (c *Cluster) psql(db, sql string) error {
	out, err := c.run("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", "postgres", "-d", db, "-c", sql)
	if err != nil {
		return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// run runs one of the cluster's programs as the cluster's user, bounded
// to two minutes.
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGCONNECT_TIMEOUT=10")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// pg_ctl start leaves the server running with our pipes as its
	// output unless told otherwise (-l); don't wait for them past exit.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.Bytes(), err
}

// findBin returns the directory of the newest installed server binaries.
func findBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if hasAll(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && hasAll(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if hasAll(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	return "", ErrNoBinaries
}

func hasAll(dir string) bool {
	for _, p := range []string{"initdb", "pg_ctl", "psql"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// version is the major version in /usr/lib/postgresql/<v>/bin, 0 if none.
func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// nobody is the unprivileged user the cluster runs as under root.
func nobody() (*syscall.Credential, error) {
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("initdb refuses to run as root and there is no user nobody to run it as: %w", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user nobody: %w", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToLower(hex.EncodeToString(b))
}
