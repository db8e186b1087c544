package postgres_test

import (
	"errors"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// Two writers of one transcript (an instance that lost the session and the
// one that took it over): the first append wins its position, the other is
// refused whole with ErrTranscriptConflict, and List counts what is kept.
func TestASecondWriterOfATranscriptIsRefused(t *testing.T) {
	s, err := postgres.Open(t.Context(), pgtest.Database(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr := s.Transcripts()
	const sid = "0f6c2a1e-3b4d-4c5e-8f90-123456789abc"
	stale, _, err := tr.Open(t.Context(), "main", sid)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := tr.Open(t.Context(), "main", sid)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Append(core.NewUserText("from the new holder", 1)); err != nil {
		t.Fatal(err)
	}
	err = stale.Append(core.NewUserText("from the old holder", 2), core.NewUserText("more", 3))
	if !errors.Is(err, postgres.ErrTranscriptConflict) {
		t.Fatalf("stale append: %v; want ErrTranscriptConflict", err)
	}
	if len(stale.Messages()) != 0 {
		t.Fatalf("the refused messages were kept in memory: %v", stale.Messages())
	}
	refs, err := tr.List(t.Context())
	if err != nil || len(refs) != 1 || refs[0].Lines != 1 || refs[0].SessionID != sid {
		t.Fatalf("List = %+v, %v; want the one line of the new holder", refs, err)
	}
}
