package catalog_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/capcat/catalogue/catalog"
)

func TestNotFoundError(t *testing.T) {
	sentinel := catalog.NewError(catalog.NotFound, "not found")
	tests := []struct {
		name string
		err  *catalog.NotFoundError
		want string
	}{
		{"top level", catalog.Missing(catalog.EntityJob, "JOB-1", nil), `job "JOB-1" not found`},
		{"in a capability", catalog.MissingIn("CAP-Y", catalog.EntityComponent, "x", sentinel), `component "x" not found in capability "CAP-Y"`},
		{"edge", catalog.MissingIn("CAP-Y", catalog.EntityDependency, "a->b", sentinel), `dependency "a->b" not found in capability "CAP-Y"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
			wrapped := fmt.Errorf("op: %w", tt.err)
			if got := catalog.CodeOf(wrapped); got != catalog.NotFound {
				t.Errorf("CodeOf(%v) = %s, want %s", wrapped, got, catalog.NotFound)
			}
			if tt.err.Err != nil && !errors.Is(wrapped, sentinel) {
				t.Errorf("errors.Is(%v, sentinel) = false, want true", wrapped)
			}
			var nf *catalog.NotFoundError
			if !errors.As(wrapped, &nf) || nf != tt.err {
				t.Errorf("errors.As(%v) did not find the *NotFoundError", wrapped)
			}
		})
	}
}
