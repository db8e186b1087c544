package transcript

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/switchboardhq/switchboard/core"
)

// Read loads a transcript without changing it: for readers (the gateway's
// chat.history, session previews) that must not race the one writer. Bad
// lines are skipped and an unterminated last line is ignored, exactly as
// Open would load them, but nothing is repaired, backed up or created. A
// missing file is an empty transcript.
func Read(path string) ([]core.Message, error) {
	fd, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	ld := loader{}
	if err := ld.read(io.NewSectionReader(fd, 0, st.Size()), st.Size()); err != nil {
		return nil, fmt.Errorf("transcript: read %s: %w", path, err)
	}
	return ld.msgs, nil
}
