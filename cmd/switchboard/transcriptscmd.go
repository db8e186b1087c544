package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
)

func transcriptsExportCommand() *command {
	var session, out string
	return &command{
		name:    "transcripts export",
		summary: "write transcripts kept in the database as JSONL files",
		help: `With store.driver: postgres, transcripts live in the database. This writes
them in the JSONL form the sqlite mode keeps on disk, one file per session
transcript: <out>/agents/<agentId>/sessions/<sessionId>.jsonl, one message
per line. --session exports the current transcript of one session (a key
such as "main" or "agent:main:telegram:direct:42"); without it, every
transcript is exported, earlier ones of reset sessions included. Existing
files are replaced. With the sqlite store the transcripts already are such
files under the state directory, and the command says where.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&session, "session", "", "export only this session's current transcript")
			fs.StringVar(&out, "out", "transcripts", "the folder to write to")
		},
		run: func(_ context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard transcripts export: takes no arguments (use --session and --out)\n")
				return exitUsage
			}
			cfg, path, code := c.loadConfig(g.config, config.ForManagement)
			if cfg == nil {
				return code
			}
			if cfg.Store.EffectiveDriver() != store.DriverPostgres {
				stateDir, err := cfg.ResolveStateDir(c.lookup, c.home)
				if err != nil {
					fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
					return exitUsage
				}
				fmt.Fprintf(c.stdout, "Nothing to export: store.driver is sqlite in %s, and the transcripts already are JSONL files in %s.\n",
					path, filepath.Join(stateDir, "agents"))
				return exitOK
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			st, err := openStore(ctx, cfg, "")
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard transcripts export: %v\n", err)
				return exitFailure
			}
			defer st.Close()
			pg := st.(*postgres.Store)
			tr := pg.Transcripts()
			var refs []postgres.TranscriptRef
			if session != "" {
				key := core.ResolveRequestSessionKey(core.DefaultAgentID, session)
				e, ok, err := pg.GetSession(ctx, key)
				if err != nil {
					fmt.Fprintf(c.stderr, "switchboard transcripts export: %v\n", err)
					return exitFailure
				}
				if !ok {
					fmt.Fprintf(c.stderr, "switchboard transcripts export: no session %s (switchboard cluster status lists busy ones; the web chat lists all)\n", key)
					return exitFailure
				}
				refs = []postgres.TranscriptRef{{AgentID: core.DefaultAgentID, SessionID: e.SessionID}}
			} else if refs, err = tr.List(ctx); err != nil {
				fmt.Fprintf(c.stderr, "switchboard transcripts export: %v\n", err)
				return exitFailure
			}
			n := 0
			for _, ref := range refs {
				lines, err := tr.Lines(ctx, ref.AgentID, ref.SessionID)
				if err == nil {
					err = writeTranscriptFile(out, ref, lines)
				}
				if err != nil {
					fmt.Fprintf(c.stderr, "switchboard transcripts export: %s/%s: %v\n", ref.AgentID, ref.SessionID, err)
					return exitFailure
				}
				n++
			}
			fmt.Fprintf(c.stdout, "Exported %d transcript(s) to %s.\n", n, filepath.Join(out, "agents"))
			return exitOK
		},
	}
}

// writeTranscriptFile writes one transcript's lines where a sqlite-mode
// state directory would keep it, replacing the file atomically.
func writeTranscriptFile(out string, ref postgres.TranscriptRef, lines [][]byte) error {
	path, err := transcript.Path(out, ref.AgentID, ref.SessionID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
