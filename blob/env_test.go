package blob_test

import (
	"errors"
	"testing"
	"time"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/blob/blobtest"
	"github.com/capcat/catalogue/catalog"
)

// testNow is the clock of every test here.
var testNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// env is an S3 (gofakes3) for one test, in-process, behind a fault injector, with the SDK's
// retries off so that an injected fault is seen by the code under test.
type env struct {
	s3     *blob.Embedded
	faults *blobtest.Faults
	store  *blob.Store
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := blobtest.New(tb, func() time.Time { return testNow }, blob.Options{})
	return &env{s3: e.S3, faults: e.Faults, store: e.Store}
}

// isValidation reports whether err is a *catalog.ValidationError on field (any if empty).
func isValidation(err error, field string) bool {
	var ve *catalog.ValidationError
	return errors.As(err, &ve) && (field == "" || ve.Field == field)
}
