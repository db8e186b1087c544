package core

import "strings"

// FieldError is a validation problem with one configuration field. Path is
// relative to the struct whose Validate method returned it (for example
// "customBindHost" or "models[0].id"); the config loader prefixes the path of
// that struct and adds the file position, so users see
// "config.yaml:12:5: gateway.customBindHost: required when bind is custom".
//
// Validate methods return a FieldError, or several joined with errors.Join.
type FieldError struct {
	// Path names the field relative to the validated struct, in the same
	// dotted form the YAML uses.
	Path string
	// Message says what is wrong and, where possible, what to write instead.
	Message string
}

// Error returns "path: message".
func (e *FieldError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// FieldErrorf returns a FieldError for path with the message joined from
// parts, a convenience for Validate methods.
func FieldErrorf(path string, parts ...string) *FieldError {
	return &FieldError{Path: path, Message: strings.Join(parts, "")}
}
