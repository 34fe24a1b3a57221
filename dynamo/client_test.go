package dynamo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The embedded backend drops a call whose caller has gone while it waited its turn: the calls
// of requests that ended long ago do not keep it busy.
func TestAbandonableDropsGoneCallers(t *testing.T) {
	var served atomic.Int32
	release := make(chan struct{})
	h := abandonable(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		<-release
	}), 1)
	busy := make(chan struct{})
	go func() {
		defer close(busy)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", nil))
	}()
	for served.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan *httptest.ResponseRecorder)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil).WithContext(ctx))
		waiting <- w
	}()
	cancel() // the caller of the waiting call hangs up
	w := <-waiting
	close(release)
	<-busy
	if w.Code != http.StatusServiceUnavailable || served.Load() != 1 {
		t.Errorf("the abandoned call = %d, served %d calls; want 503 and 1", w.Code, served.Load())
	}
	// A live caller is served.
	if w := httptest.NewRecorder(); true {
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
		if served.Load() != 2 {
			t.Errorf("a live call was not served")
		}
	}
}
