package transcript

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestReadDoesNotRepairOrCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if msgs, err := Read(path); err != nil || msgs != nil {
		t.Fatalf("missing file: %v %v", msgs, err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("Read created the file")
	}
	good := `{"role":"user","content":"hi","timestamp":1}` + "\n"
	torn := `{"role":"assistant","content":[{"type":"te`
	if err := os.WriteFile(path, []byte(good+"not json\n"+good+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	msgs, err := Read(path)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("Read = %d messages, %v; want the 2 good lines", len(msgs), err)
	}
	if u, ok := msgs[0].(*core.UserMessage); !ok || u.Text() != "hi" {
		t.Errorf("first message = %#v", msgs[0])
	}
	data, _ := os.ReadFile(path)
	if string(data) != good+"not json\n"+good+torn {
		t.Errorf("Read changed the file")
	}
	if m, _ := filepath.Glob(path + ".bak*"); len(m) != 0 {
		t.Errorf("Read made a backup: %v", m)
	}
}
