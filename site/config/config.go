// Package config holds the error type every package's Config.Validate
// returns: one FieldError per field that cannot work, so a command can
// name the flag behind the field.
package config

import (
	"errors"
	"fmt"
)

// FieldError says why the value of one Config field cannot work.
type FieldError struct {
	Field   string // the Config field, such as "RetryMin"
	Problem string // what is wrong, such as "must be positive"
}

// Error returns "Field: Problem".
func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Problem) }

// Problems collects FieldErrors; Err returns them joined.
type Problems []error

// Add records a problem of field unless ok.
func (p *Problems) Add(ok bool, field, format string, a ...any) {
	if !ok {
		*p = append(*p, &FieldError{Field: field, Problem: fmt.Sprintf(format, a...)})
	}
}

// Err returns nil without problems, else the problems joined with
// errors.Join (errors.As finds the first *FieldError).
func (p Problems) Err() error { return errors.Join(p...) }

// Fields returns every *FieldError inside err (joined or wrapped).
func Fields(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		var fe *FieldError
		if errors.As(err, &fe) && fe == err {
			out = append(out, fe)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}
