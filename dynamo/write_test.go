package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

func newCapability(id string) *catalog.Capability {
	return &catalog.Capability{CapabilityID: id, Name: "Cap " + id, BusinessDomain: "testing", Status: catalog.CapabilityPlanning, Priority: catalog.PriorityMedium}
}

func newComponent(capID, id string, order int) *catalog.Component {
	return &catalog.Component{CapabilityID: capID, ComponentID: id, Name: "Component " + id, ComponentType: "worker", Order: order, Status: catalog.ComponentActive,
		Health: &catalog.ComponentHealth{Status: catalog.HealthHealthy, Availability: 99.99, ResponseTime: 50}}
}

// A TransactionConflict (the transaction was cancelled: nothing committed) is re-planned and
// sent again, with a ClientRequestToken of its own: the re-planned attempt's parameters (its
// timestamps) differ, and DynamoDB refuses another call's parameters under a token it has seen
// (IdempotentParameterMismatch). The SDK's own retries of one attempt (a lost answer) resend
// the same input, token included. The write commits once.
func TestTransactionConflictReplannedWithItsOwnToken(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{})
	env.RequireTransactions(t)
	ctx := context.Background()
	if _, err := env.Store.CreateCapability(ctx, newCapability("CAP-TC-1"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var tokens []string
	env.Counter.Before = func(op string, w http.ResponseWriter) bool { return false }
	conflicts := 0
	env.Counter.Inspect = func(op string, body []byte, w http.ResponseWriter) bool {
		if op != "TransactWriteItems" {
			return false
		}
		var in struct{ ClientRequestToken string }
		_ = json.Unmarshal(body, &in)
		mu.Lock()
		defer mu.Unlock()
		tokens = append(tokens, in.ClientRequestToken)
		if conflicts < 2 {
			conflicts++
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","message":"Transaction cancelled","CancellationReasons":[{"Code":"TransactionConflict"},{"Code":"None"},{"Code":"None"},{"Code":"None"},{"Code":"None"}]}`)
			return true
		}
		return false
	}
	idem, _ := dynamo.NewIdempotency("tok-conflict-1", "addComponent", "x")
	if _, err := env.Store.AddComponent(ctx, newComponent("CAP-TC-1", "tc-worker-1", 1), idem); err != nil {
		t.Fatalf("AddComponent after conflicts: %v", err)
	}
	if len(tokens) != 3 || tokens[0] == "" || tokens[1] == "" || tokens[2] == "" || tokens[0] == tokens[1] || tokens[1] == tokens[2] || tokens[0] == tokens[2] {
		t.Errorf("ClientRequestTokens = %q, want three different, non-empty", tokens)
	}
	if err := env.Store.CheckPartition(ctx, "CAP-TC-1"); err != nil {
		t.Error(err)
	}
}

// After the context is cancelled the SDK does not retry.
func TestNoRetryAfterCancel(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{MaxAttempts: 5})
	env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		time.Sleep(200 * time.Millisecond)
		w.WriteHeader(http.StatusInternalServerError)
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := env.Store.Capability(ctx, "CAP-1")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Capability after the deadline = %v, want a deadline error", err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := env.Counter.Total(); n != 1 {
		t.Errorf("%d requests, want 1: no retry once the context is done", n)
	}
}

// Two stores (two server processes) write one capability at once: the WriteSeq condition
// serialises them across processes, no update is lost, and the aggregates equal a recount.
func TestWritersInTwoProcesses(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{})
	env.RequireTransactions(t)
	ctx := context.Background()
	other := dynamo.New(env.Client, dynamo.Options{Table: env.Table})
	if _, err := env.Store.CreateCapability(ctx, newCapability("CAP-2P-1"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		store := env.Store
		if i%2 == 1 {
			store = other
		}
		wg.Go(func() {
			_, err := store.AddComponent(ctx, newComponent("CAP-2P-1", fmt.Sprintf("p-%02d", i), i+1), dynamo.Idempotency{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("AddComponent: %v", err)
		}
	}
	c, err := env.Store.Capability(ctx, "CAP-2P-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Aggregates.TotalComponents != n {
		t.Errorf("totalComponents = %d, want %d", c.Aggregates.TotalComponents, n)
	}
	if err := env.Store.CheckPartition(ctx, "CAP-2P-1"); err != nil {
		t.Error(err)
	}
}

// A mutation's read of METADATA precedes its read of the segments it changes. Read at once
// (as they were), a write committed between the segments' Query and METADATA's GetItem gave
// a state whose WriteSeq was the new one and whose components were the old ones: the WriteSeq
// condition held and the commit wrote aggregates without the other write's component (seen
// in CI as TestWritersInTwoProcesses' totalComponents 15 of 16). Here the other write commits
// while A's GetItem is held: A's Query, sent at once with it before the fix, had gone through.
func TestMutationReadsMetadataBeforeSegments(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{})
	env.RequireTransactions(t)
	ctx := context.Background()
	other := dynamo.New(env.Client, dynamo.Options{Table: env.Table})
	if _, err := env.Store.CreateCapability(ctx, newCapability("CAP-RACE-1"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	held, release := make(chan struct{}), make(chan struct{})
	env.Counter.Before = func(op string, _ http.ResponseWriter) bool {
		if op == "GetItem" {
			first := false
			once.Do(func() { first = true })
			if first {
				close(held)
				<-release
			}
		}
		return false
	}
	done := make(chan error, 1)
	go func() {
		_, err := env.Store.AddComponent(ctx, newComponent("CAP-RACE-1", "race-a", 1), dynamo.Idempotency{})
		done <- err
	}()
	<-held
	time.Sleep(100 * time.Millisecond) // a Query sent with the held GetItem is answered meanwhile
	if _, err := other.AddComponent(ctx, newComponent("CAP-RACE-1", "race-b", 2), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c, err := env.Store.Capability(ctx, "CAP-RACE-1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Aggregates.TotalComponents != 2 {
		t.Errorf("totalComponents = %d, want 2: a write between the mutation's reads was lost", c.Aggregates.TotalComponents)
	}
	if err := env.Store.CheckPartition(ctx, "CAP-RACE-1"); err != nil {
		t.Error(err)
	}
}

// A delete interrupted after its first step is finished by a rerun, and the capability is
// gone from reads from the first step on.
func TestDeleteCapabilityResumes(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{})
	env.RequireTransactions(t)
	ctx := context.Background()
	if _, err := env.Store.CreateCapability(ctx, newCapability("CAP-DEL-1"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := env.Store.AddComponent(ctx, newComponent("CAP-DEL-1", fmt.Sprintf("d-%02d", i), i+1), dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op == "BatchWriteItem" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"boom"}`)
			return true
		}
		return false
	}
	if err := env.Store.DeleteCapability(ctx, "CAP-DEL-1", 1, dynamo.Idempotency{}); err == nil {
		t.Fatal("DeleteCapability succeeded with failing batch deletes")
	}
	if _, err := env.Store.Capability(ctx, "CAP-DEL-1"); !dynamo.IsNotFound(err) {
		t.Errorf("Capability during an interrupted delete = %v, want ErrNotFound", err)
	}
	if _, err := env.Store.AddComponent(ctx, newComponent("CAP-DEL-1", "late-1", 50), dynamo.Idempotency{}); !dynamo.IsNotFound(err) {
		t.Errorf("AddComponent to a capability being deleted = %v, want ErrNotFound", err)
	}
	env.Counter.Before = nil
	if err := env.Store.DeleteCapability(ctx, "CAP-DEL-1", 99, dynamo.Idempotency{}); err != nil {
		t.Fatalf("rerun DeleteCapability: %v", err)
	}
	p, err := env.Store.ReadPartition(ctx, "CAP-DEL-1", dynamo.SegComponents|dynamo.SegDependencies|dynamo.SegRules)
	if err != nil || len(p.Components) != 0 {
		t.Errorf("partition after the rerun = %+v, %v", p, err)
	}
	if err := env.Store.DeleteCapability(ctx, "CAP-DEL-1", 1, dynamo.Idempotency{}); !dynamo.IsNotFound(err) {
		t.Errorf("third DeleteCapability = %v, want ErrNotFound", err)
	}
}

// A capability-wide time window reads one key range per component (after one Query for the
// components), never the whole metric history, and pages across components without loss.
func TestCapabilityWideMetricsWindow(t *testing.T) {
	now := time.Date(2025, 11, 22, 14, 32, 0, 0, time.UTC)
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	b := &catalog.Bundle{Capability: newCapability("CAP-MW-1")}
	for c := range 3 {
		id := fmt.Sprintf("mw-comp-%d", c)
		b.Components = append(b.Components, newComponent("CAP-MW-1", id, c+1))
		for i := range 48 { // 4 hours of 5-minute samples
			at := now.Truncate(5 * time.Minute).Add(-time.Duration(i) * 5 * time.Minute)
			for _, mt := range []catalog.MetricType{catalog.MetricPerformance, catalog.MetricResource} {
				b.Metrics = append(b.Metrics, &catalog.Metric{ComponentID: id, MetricType: mt, Timestamp: catalog.NewTimestamp(at), Interval: "5m"})
			}
		}
	}
	if _, err := env.Store.BulkLoad(ctx, []*catalog.Bundle{b}, 2); err != nil {
		t.Fatal(err)
	}
	from := now.Add(-time.Hour)
	for _, mt := range []catalog.MetricType{"", catalog.MetricPerformance} {
		f := dynamo.MetricFilter{MetricType: mt, From: &from}
		env.Counter.Reset()
		whole, err := env.Store.Metrics(ctx, "CAP-MW-1", f, 1000, "")
		if err != nil {
			t.Fatal(err)
		}
		perComponent := 12
		if mt == "" {
			perComponent = 24
		}
		if len(whole.Items) != 3*perComponent || whole.HasNext {
			t.Fatalf("Metrics(type %q, last hour) = %d items (more %v), want %d", mt, len(whole.Items), whole.HasNext, 3*perComponent)
		}
		if !env.External {
			want := 1 + 3
			if mt == "" {
				want = 1 + 3*len(catalog.MetricTypes)
			}
			if n := env.Counter.Ops()["Query"]; n != want {
				t.Errorf("Metrics(type %q, last hour) used %d queries, want %d (1 + one per component and type)", mt, n, want)
			}
		}
		var paged []string
		after := ""
		for range 100 {
			p, err := env.Store.Metrics(ctx, "CAP-MW-1", f, 7, after)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range p.Items {
				paged = append(paged, m.ComponentID+"/"+string(m.MetricType)+"/"+m.Timestamp.String())
			}
			if !p.HasNext {
				break
			}
			after = p.Cursors[len(p.Cursors)-1]
		}
		if len(paged) != len(whole.Items) {
			t.Fatalf("paged %d items, whole window %d", len(paged), len(whole.Items))
		}
		for i, m := range whole.Items {
			if key := m.ComponentID + "/" + string(m.MetricType) + "/" + m.Timestamp.String(); paged[i] != key {
				t.Fatalf("page order differs at %d: %s vs %s", i, paged[i], key)
			}
			if i > 0 && whole.Items[i-1].ComponentID > m.ComponentID {
				t.Fatalf("not in component order at %d", i)
			}
		}
	}
}

// One clientRequestToken raced on eight capabilities at once: exactly one mutation commits, the
// others are ErrTokenReused and write nothing. The writers do not share a capability lock, so
// only the transaction's condition on the token can tell them apart.
func TestTokenRaceAcrossCapabilities(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	const n = 8
	for i := range n {
		if _, err := env.Store.CreateCapability(ctx, newCapability(fmt.Sprintf("CAP-TR-%d", i)), dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := newComponent(fmt.Sprintf("CAP-TR-%d", i), "race-1", 1)
			idem, err := dynamo.NewIdempotency("tok-race-1", "addComponent", c.CapabilityID, c)
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = env.Store.AddComponent(ctx, c, idem)
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case errors.Is(err, dynamo.ErrTokenReused):
		default:
			t.Errorf("AddComponent on CAP-TR-%d = %v, want nil or ErrTokenReused", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d writers committed with one token, want 1 (errors %v)", won, n, errs)
	}
	total := 0
	for i := range n {
		id := fmt.Sprintf("CAP-TR-%d", i)
		c, err := env.Store.Capability(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		total += c.Aggregates.TotalComponents
		if err := env.Store.CheckPartition(ctx, id); err != nil {
			t.Error(err)
		}
	}
	if total != 1 {
		t.Errorf("%d components written across the capabilities, want 1", total)
	}
}

// Each field within its bound, a component can still add up to more than DynamoDB's 400 KB item:
// it is a *catalog.ValidationError (BAD_USER_INPUT) before any write, never a ValidationException
// from DynamoDB.
func TestItemOverDynamoDBLimitRefused(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	if _, err := env.Store.CreateCapability(ctx, newCapability("CAP-BIG-1"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	text := func(c byte) string { return strings.Repeat(string(c), catalog.MaxTextLength) }
	c := newComponent("CAP-BIG-1", "big-1", 1)
	c.Technology = &catalog.Technology{}
	c.Deployment = &catalog.Deployment{}
	c.Configuration = &catalog.Configuration{}
	for range catalog.MaxListLength {
		c.Technology.Dependencies = append(c.Technology.Dependencies, text('d'))
		c.Configuration.Secrets = append(c.Configuration.Secrets, text('s'))
		c.Deployment.Endpoints = append(c.Deployment.Endpoints, catalog.Endpoint{Type: text('t'), URL: text('u'), HealthCheck: text('h')})
	}
	if err := catalog.ValidateComponent(c); err != nil {
		t.Fatalf("ValidateComponent(every field within its bound) = %v", err)
	}
	env.Counter.Reset()
	_, err := env.Store.AddComponent(ctx, c, dynamo.Idempotency{})
	var invalid *catalog.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("AddComponent(a 400 KB component) = %v, want a *catalog.ValidationError", err)
	}
	if n := env.Counter.Ops()["TransactWriteItems"]; n != 0 {
		t.Errorf("AddComponent(a 400 KB component) sent %d transactions, want 0", n)
	}
}

// A caller that hangs up once the delete has begun does not stop it: the steps after the first
// transaction run detached, and the partition and its claims are gone when DeleteCapability
// returns, however early the client disconnects.
func TestDeleteSurvivesTheCaller(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{})
	env.RequireTransactions(t)
	if _, err := env.Store.CreateCapability(context.Background(), newCapability("CAP-DEL-2"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := env.Store.AddComponent(context.Background(), newComponent("CAP-DEL-2", fmt.Sprintf("e-%02d", i), i+1), dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op == "BatchWriteItem" {
			cancel() // the client hangs up as the first batch goes out
		}
		return false
	}
	_ = env.Store.DeleteCapability(ctx, "CAP-DEL-2", 1, dynamo.Idempotency{})
	env.Counter.Before = nil
	if items := leftAfterDelete(t, env, "CAPABILITY#CAP-DEL-2"); len(items) != 0 {
		t.Errorf("%d items left after the caller hung up: %v", len(items), items)
	}
	if _, err := env.Store.ComponentOwner(context.Background(), "e-00"); !dynamo.IsNotFound(err) {
		t.Errorf("claim of e-00 after the delete: %v", err)
	}
}

// A delete stopped after its first step (a crash) is finished by ResumeDeletes, which the server
// runs at start.
func TestResumeDeletes(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	loadSample(t, env)
	env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op == "BatchWriteItem" || op == "DeleteItem" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"crash"}`)
			return true
		}
		return false
	}
	if err := env.Store.DeleteCapability(ctx, "CAP-ID-VERIFY-001", 1, dynamo.Idempotency{}); err == nil {
		t.Fatal("the interrupted delete succeeded")
	}
	env.Counter.Before = nil
	if n := len(partitionItems(t, env, "CAPABILITY#CAP-ID-VERIFY-001")); n == 0 {
		t.Fatal("nothing left to resume")
	}
	n, err := env.Store.ResumeDeletes(ctx)
	if err != nil || n != 1 {
		t.Fatalf("ResumeDeletes = %d, %v; want 1", n, err)
	}
	if items := leftAfterDelete(t, env, "CAPABILITY#CAP-ID-VERIFY-001"); len(items) != 0 {
		t.Errorf("%d items left after ResumeDeletes: %v", len(items), items)
	}
	// One change per step, each once: the step that the crash stopped wrote none, its rerun
	// one; the resumed steps are the system's.
	var steps []string
	for sk, it := range partitionItems(t, env, "CAPABILITY#CAP-ID-VERIFY-001") {
		if strings.HasPrefix(sk, "CHANGE#") {
			d := it["Data"].(*types.AttributeValueMemberM).Value
			steps = append(steps, d["detail"].(*types.AttributeValueMemberS).Value+" by "+it["ActorName"].(*types.AttributeValueMemberS).Value)
		}
	}
	sort.Strings(steps)
	if want := []string{"marked deleting: gone from every read by system", "metadata removed by system", "partition removed (history and changes kept) by system"}; !slices.Equal(steps, want) {
		t.Errorf("the delete's changes = %q, want %q", steps, want)
	}
	if n, err := env.Store.ResumeDeletes(ctx); err != nil || n != 0 {
		t.Errorf("second ResumeDeletes = %d, %v; want 0", n, err)
	}
}

// recordMetrics across two capabilities, stopped between them (the second capability's
// transaction fails), is completed by a retry with its token: the retry answers with both
// capabilities' components, applies the second one's health, and does not apply the first
// one's again; a further retry changes nothing; the token with other input is refused before
// any sample is written. (The token once covered the first capability only: the retry skipped
// the rest and answered components: [].)
func TestRecordMetricsRetryCompletesEveryCapability(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	loadSample(t, env)
	at := sampleNow.Add(2 * time.Minute) // newer than every sample: the health moves
	sample := func(capID, compID string, avail float64) *catalog.Metric {
		return &catalog.Metric{CapabilityID: capID, ComponentID: compID, MetricType: catalog.MetricPerformance, Interval: "1m",
			Timestamp: catalog.NewTimestamp(at), Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: avail}}}
	}
	input := func() []*catalog.Metric {
		return []*catalog.Metric{sample(alertID, "api-server-alert-001", 97), sample("CAP-FRAUD-DET-001", "api-server-fraud-001", 96)}
	}
	idem, _ := dynamo.NewIdempotency("tok-metrics-1", "recordMetrics", "two capabilities")
	revision := func(capID, compID string) int {
		p, err := env.Store.ReadPartition(ctx, capID, dynamo.SegComponents)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Components {
			if c.ComponentID == compID {
				return c.Revision
			}
		}
		t.Fatalf("no %s in %s", compID, capID)
		return 0
	}
	alertBefore, fraudBefore := revision(alertID, "api-server-alert-001"), revision("CAP-FRAUD-DET-001", "api-server-fraud-001")
	transactions := 0
	env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op == "TransactWriteItems" {
			transactions++
			// The first transaction is the rollups' (both capabilities' in one), the second the
			// first capability's health. The crash: the second capability's health never lands.
			if transactions == 3 {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"crash"}`)
				return true
			}
		}
		return false
	}
	if _, err := env.Store.RecordMetrics(ctx, input(), idem); err == nil {
		t.Fatal("the interrupted call succeeded")
	}
	env.Counter.Before = nil
	if got := revision(alertID, "api-server-alert-001"); got != alertBefore+1 {
		t.Fatalf("first capability's component at revision %d, want %d", got, alertBefore+1)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		res, err := env.Store.RecordMetrics(ctx, input(), idem)
		if err != nil {
			t.Fatalf("retry %d: %v", attempt, err)
		}
		var ids []string
		for _, c := range res.Components {
			ids = append(ids, c.CapabilityID+"/"+c.ComponentID)
		}
		if fmt.Sprint(ids) != "[CAP-ALERT-MGT-001/api-server-alert-001 CAP-FRAUD-DET-001/api-server-fraud-001]" {
			t.Errorf("retry %d answered components %v", attempt, ids)
		}
		if a, f := revision(alertID, "api-server-alert-001"), revision("CAP-FRAUD-DET-001", "api-server-fraud-001"); a != alertBefore+1 || f != fraudBefore+1 {
			t.Errorf("after retry %d: revisions %d and %d, want %d and %d (each health applied once)", attempt, a, f, alertBefore+1, fraudBefore+1)
		}
	}
	other, _ := dynamo.NewIdempotency("tok-metrics-1", "recordMetrics", "other input")
	env.Counter.Reset()
	if _, err := env.Store.RecordMetrics(ctx, input(), other); !errors.Is(err, dynamo.ErrTokenReused) {
		t.Errorf("the token with other input = %v, want ErrTokenReused", err)
	}
	if ops := env.Counter.Ops(); ops["BatchWriteItem"] != 0 {
		t.Errorf("the refused call wrote samples: %v", ops)
	}
}

// A lease has one holder at a time until it expires; its holder may extend and release it.
func TestLease(t *testing.T) {
	now := sampleNow
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	take := func(holder string) bool {
		t.Helper()
		ok, err := env.Store.AcquireLease(ctx, "job", holder, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !take("a") || take("b") || !take("a") {
		t.Fatal("a takes the lease, b cannot, a extends it")
	}
	now = now.Add(2 * time.Minute) // a stopped: the lease expires
	if !take("b") || take("a") {
		t.Fatal("after expiry b takes it and a cannot")
	}
	if err := env.Store.ReleaseLease(ctx, "job", "a"); err != nil || take("a") {
		t.Fatalf("a released b's lease: %v", err)
	}
	if err := env.Store.ReleaseLease(ctx, "job", "b"); err != nil || !take("a") {
		t.Fatalf("after b released it, a cannot take it: %v", err)
	}
}

// leftAfterDelete returns the SKs of a deleted capability's partition beside its history, and
// fails unless the history ends in a tombstone.
func leftAfterDelete(tb testing.TB, env *dynamotest.Env, pk string) []string {
	tb.Helper()
	var left []string
	tomb := false
	for sk, it := range partitionItems(tb, env, pk) {
		if strings.HasPrefix(sk, "CHANGE#") {
			continue // the change feed outlives the capability, as its history does
		}
		if !strings.HasPrefix(sk, "VERSION#CAPABILITY#") {
			left = append(left, sk)
			continue
		}
		if b, ok := it["Deleted"].(*types.AttributeValueMemberBOOL); ok && b.Value {
			tomb = true
		}
	}
	if !tomb {
		tb.Errorf("%s: no tombstone", pk)
	}
	return left
}

// recordMetrics reports at most MaxComponentsPerCapability components of one capability per
// call: the health transaction holds a health update, a change record and the HEALTH index card
// per component. At the
// bound every component's health and change land in one transaction; one over is BAD_USER_INPUT
// before any sample is written (it failed at the transaction, after the samples were written,
// leaving them without health and change).
func TestRecordMetricsComponentsPerCapability(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	const capID = "CAP-MANY-COMPONENTS"
	n := dynamo.MaxComponentsPerCapability + 1
	b := &catalog.Bundle{Capability: newCapability(capID)}
	for i := range n {
		b.Components = append(b.Components, newComponent(capID, fmt.Sprintf("many-%02d", i), i+1))
	}
	if _, err := env.Store.BulkLoad(ctx, []*catalog.Bundle{b}, 4); err != nil {
		t.Fatal(err)
	}
	at := sampleNow.Add(2 * time.Minute)
	samples := func(k int) []*catalog.Metric {
		var ms []*catalog.Metric
		for i := range k {
			ms = append(ms, &catalog.Metric{CapabilityID: capID, ComponentID: fmt.Sprintf("many-%02d", i), MetricType: catalog.MetricPerformance, Interval: "1m",
				Timestamp: catalog.NewTimestamp(at), Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: 90}}})
		}
		return ms
	}
	env.Counter.Reset()
	_, err := env.Store.RecordMetrics(ctx, samples(n), dynamo.Idempotency{})
	var invalid *catalog.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("%d components of one capability: %v, want a validation error", n, err)
	}
	if w := env.Counter.Ops()["BatchWriteItem"] + env.Counter.Ops()["TransactWriteItems"]; w != 0 {
		t.Errorf("refused call wrote: %v", env.Counter.Ops())
	}
	// With a token: the transaction at its fullest.
	res, err := env.Store.RecordMetrics(ctx, samples(n-1), dynamo.Idempotency{Token: "many-components", Hash: "h"})
	if err != nil {
		t.Fatalf("%d components of one capability: %v", n-1, err)
	}
	if len(res.Components) != n-1 {
		t.Errorf("%d components updated, want %d", len(res.Components), n-1)
	}
	// Every status moved (healthy -> unhealthy): each component's HEALTH index card was
	// rewritten too, three actions a component, the transaction full.
	for _, c := range res.Components {
		if c.Health == nil || c.Health.Status != catalog.HealthUnhealthy {
			t.Errorf("%s health = %+v, want unhealthy", c.ComponentID, c.Health)
		}
	}
	if p, err := env.Store.Components(ctx, dynamo.ComponentFilter{HealthStatuses: []catalog.HealthStatus{catalog.HealthUnhealthy}}, dynamo.MaxPage, ""); err != nil || len(p.Items) != n-1 {
		t.Errorf("Components(unhealthy) after the call = %v, want %d components", err, n-1)
	}
	if err := env.Store.CheckPartition(ctx, capID); err != nil {
		t.Errorf("audit after the call: %v", err)
	}
}
