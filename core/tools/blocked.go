package tools

import "errors"

// BlockedError is an error a tool returns to refuse a call the way a
// before_tool_call hook does: the model gets the seed-002 §8.2 blocked
// envelope with Reason rather than the §8.1 error envelope, and
// after_tool_call hooks get an error wrapping ErrBlocked. Tools that ask
// for approval return it for a denial.
type BlockedError struct {
	// Reason says why the call was refused.
	Reason string
}

// Blocked returns a *BlockedError with reason.
func Blocked(reason string) error { return &BlockedError{Reason: reason} }

func (e *BlockedError) Error() string { return "blocked: " + e.Reason }

// Unwrap makes errors.Is(err, ErrBlocked) hold.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// asBlocked reports the reason of a *BlockedError in err's chain.
func asBlocked(err error) (string, bool) {
	var b *BlockedError
	if errors.As(err, &b) {
		return b.Reason, true
	}
	return "", false
}
