package catalog

import "fmt"

// ValidationError reports input that breaks a rule of the catalogue. Field names the argument
// or input path at fault (for example "input.conditions[1].operator"); it is shown to the client
// as a BAD_USER_INPUT error.
type ValidationError struct {
	Field   string
	Message string
}

// Invalid returns a *ValidationError for field with a formatted message.
func Invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}
