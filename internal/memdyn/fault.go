package memdyn

import "encoding/json"

// Faults make memdyn fail on purpose, for tests of how its callers recover: the failures minidyn
// emulates (EmulateFailure, EmulateFailureForTable, EmulateUnprocessedItems), so that tests
// keep injecting them when memdyn is their backend.
type Faults struct {
	// Fail, when set, is asked before each call with its operation and each table it names
	// (and the index of a Query or Scan); an error code it returns fails the call with that
	// code ("InternalServerError" as HTTP 500, which the SDK retries).
	Fail func(op, table, index string) string
	// Unprocessed, when set, is asked for each sub-request of a BatchGetItem (with its key) and
	// of a BatchWriteItem (with its item, or a delete's key), n being its position among the
	// table's requests in the call; true leaves it out and returns it in UnprocessedKeys or
	// UnprocessedItems, as DynamoDB does with what it could not process.
	Unprocessed func(table string, n int, item map[string]*AttributeValue) bool
}

// SetFaults installs the fault hooks (nil removes them). It is safe while requests run.
func (s *Server) SetFaults(f *Faults) {
	s.faults.Store(f)
	s.gen.Add(1) // what a read returns may change: see Generation
}

// fail returns the error code Fail chose for a call, "" for none.
func (f *Faults) fail(op string, body []byte) string {
	if f.Fail == nil {
		return ""
	}
	var in struct {
		TableName     string
		IndexName     string
		RequestItems  map[string]json.RawMessage
		TransactItems []map[string]struct{ TableName string }
	}
	_ = json.Unmarshal(body, &in)
	var tables []string
	if in.TableName != "" {
		tables = append(tables, in.TableName)
	}
	for name := range in.RequestItems {
		tables = append(tables, name)
	}
	for _, a := range in.TransactItems {
		for _, x := range a {
			tables = append(tables, x.TableName)
		}
	}
	if len(tables) == 0 {
		tables = []string{""}
	}
	for _, t := range tables {
		if code := f.Fail(op, t, in.IndexName); code != "" {
			return code
		}
	}
	return ""
}

// unprocessed returns the Unprocessed hook, nil when none is set.
func (s *Server) unprocessed() func(string, int, map[string]*AttributeValue) bool {
	if f := s.faults.Load(); f != nil {
		return f.Unprocessed
	}
	return nil
}
