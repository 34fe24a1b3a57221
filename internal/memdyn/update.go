package memdyn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// Update expressions, as UpdateItem and a transaction's Update send them: SET of document paths
// (names joined by dots, e.g. #d.#a.#t) to a value, another path, if_not_exists(path, value),
// list_append(a, b) or a sum or difference of numbers; and REMOVE of paths. ADD, DELETE and
// list indexes are refused with a ValidationException.

type setAction struct {
	path  []string
	value *valueExpr
}

// valueExpr is the right-hand side of a SET: an operand, a function of operands, or a sum or
// difference of two of them.
type valueExpr struct {
	operand *node // a path or a :value
	fn      string
	args    []*valueExpr
	op      byte // '+' or '-' between args[0] and args[1]
}

type updateExpr struct {
	sets    []setAction
	removes [][]string
}

func parseUpdate(s string, names map[string]string, values map[string]*av, used map[string]bool) (*updateExpr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, names: names, values: values, used: used}
	u := &updateExpr{}
	seen := map[string]bool{}
	for p.peek().kind != tokEOF {
		t := p.next()
		clause := strings.ToUpper(t.text)
		if t.kind != tokIdent || seen[clause] {
			return nil, fmt.Errorf("invalid UpdateExpression: unexpected %q", t.text)
		}
		seen[clause] = true
		switch clause {
		case "SET", "REMOVE":
		case "ADD", "DELETE":
			return nil, fmt.Errorf("memdyn does not implement %s in update expressions", clause)
		default:
			return nil, fmt.Errorf("invalid UpdateExpression: unexpected %q", t.text)
		}
		for {
			path, err := p.path()
			if err != nil {
				return nil, err
			}
			if clause == "SET" {
				if err := p.expect("="); err != nil {
					return nil, err
				}
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				u.sets = append(u.sets, setAction{path, v})
			} else {
				u.removes = append(u.removes, path)
			}
			if n := p.peek(); n.kind == tokOp && n.text == "," {
				p.pos++
				continue
			}
			break
		}
	}
	if len(u.sets)+len(u.removes) == 0 {
		return nil, fmt.Errorf("invalid UpdateExpression: the expression is empty")
	}
	// DynamoDB refuses two actions on one path or on a path and its parent.
	var all [][]string
	for _, a := range u.sets {
		all = append(all, a.path)
	}
	all = append(all, u.removes...)
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if len(a) > len(b) {
				a, b = b, a
			}
			if slicesEqual(a, b[:len(a)]) {
				return nil, validation("Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [%s], path two: [%s]", strings.Join(all[i], ", "), strings.Join(all[j], ", "))
			}
		}
	}
	return u, nil
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (p *parser) path() ([]string, error) {
	n, err := p.operand()
	if err != nil {
		return nil, err
	}
	if n.path == nil {
		return nil, fmt.Errorf("invalid UpdateExpression: expected a document path")
	}
	if t := p.peek(); t.kind == tokOp && t.text == "[" {
		return nil, fmt.Errorf("memdyn does not implement list indexes in document paths")
	}
	return n.path, nil
}

func (p *parser) value() (*valueExpr, error) {
	a, err := p.valueOperand()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind == tokOp && (t.text == "+" || t.text == "-") {
		p.pos++
		b, err := p.valueOperand()
		if err != nil {
			return nil, err
		}
		return &valueExpr{args: []*valueExpr{a, b}, op: t.text[0]}, nil
	}
	return a, nil
}

func (p *parser) valueOperand() (*valueExpr, error) {
	if t := p.peek(); t.kind == tokIdent && p.toks[p.pos+1].kind == tokOp && p.toks[p.pos+1].text == "(" {
		name := t.text
		if name != "if_not_exists" && name != "list_append" {
			return nil, fmt.Errorf("invalid UpdateExpression: unknown function %s", name)
		}
		p.pos += 2
		v := &valueExpr{fn: name}
		for {
			a, err := p.value()
			if err != nil {
				return nil, err
			}
			v.args = append(v.args, a)
			if t := p.next(); t.text == ")" {
				break
			} else if t.text != "," {
				return nil, fmt.Errorf("expected , or ) in %s(), got %q", name, t.text)
			}
		}
		if len(v.args) != 2 || (name == "if_not_exists" && (v.args[0].operand == nil || v.args[0].operand.path == nil)) {
			return nil, fmt.Errorf("invalid UpdateExpression: wrong arguments to %s", name)
		}
		return v, nil
	}
	n, err := p.operand()
	if err != nil {
		return nil, err
	}
	return &valueExpr{operand: n}, nil
}

// eval computes a SET's value against the item as it was before the update.
func (v *valueExpr) eval(item map[string]*av) (*av, error) {
	switch {
	case v.operand != nil:
		x := v.operand.resolve(item)
		if x == nil {
			return nil, validation("The provided expression refers to an attribute that does not exist in the item")
		}
		return x, nil
	case v.fn == "if_not_exists":
		if x := v.args[0].operand.resolve(item); x != nil {
			return x, nil
		}
		return v.args[1].eval(item)
	}
	a, err := v.args[0].eval(item)
	if err != nil {
		return nil, err
	}
	b, err := v.args[1].eval(item)
	if err != nil {
		return nil, err
	}
	if v.fn == "list_append" {
		if a.L == nil || b.L == nil {
			return nil, validation("Incorrect operand type for operator or function; operator or function: list_append")
		}
		return &av{L: append(append([]*av{}, a.L...), b.L...)}, nil
	}
	if a.N == nil || b.N == nil {
		return nil, validation("An operand in the update expression has an incorrect data type")
	}
	x, okx := new(big.Rat).SetString(*a.N)
	y, oky := new(big.Rat).SetString(*b.N)
	if !okx || !oky {
		return nil, fmt.Errorf("invalid number")
	}
	if v.op == '+' {
		x.Add(x, y)
	} else {
		x.Sub(x, y)
	}
	s := x.RatString()
	if !x.IsInt() {
		s = strings.TrimRight(x.FloatString(38), "0")
	}
	return &av{N: &s}, nil
}

// apply returns the item after the update (old, nil when absent, is left alone). key is the
// update's key, which starts an absent item.
func (u *updateExpr) apply(t *table, old map[string]*av, key map[string]*av) (map[string]*av, error) {
	for _, path := range u.paths() {
		if path[0] == t.hash || path[0] == t.rng {
			return nil, validation("Cannot update attribute %s. This attribute is part of the key", path[0])
		}
	}
	// Values are computed against the item before the update, then written.
	vals := make([]*av, len(u.sets))
	for i, a := range u.sets {
		v, err := a.value.eval(old)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	item := copyItem(old)
	if item == nil {
		item = copyItem(key)
	}
	invalid := validation("The document path provided in the update expression is invalid for update")
	for i, a := range u.sets {
		m, ok := parentOf(item, a.path)
		if !ok {
			return nil, invalid
		}
		m[a.path[len(a.path)-1]] = vals[i]
	}
	for _, path := range u.removes {
		m, ok := parentOf(item, path)
		if !ok {
			return nil, invalid
		}
		delete(m, path[len(path)-1])
	}
	return item, nil
}

func (u *updateExpr) paths() [][]string {
	var out [][]string
	for _, a := range u.sets {
		out = append(out, a.path)
	}
	return append(out, u.removes...)
}

// parentOf returns the map that holds the last name of path, which must exist.
func parentOf(item map[string]*av, path []string) (map[string]*av, bool) {
	m := item
	for _, k := range path[:len(path)-1] {
		v := m[k]
		if v == nil || v.M == nil {
			return nil, false
		}
		m = v.M
	}
	return m, true
}

// copyItem copies an item deeply enough that setting and removing paths leaves the original
// alone: maps are copied, other values shared (they are never modified).
func copyItem(m map[string]*av) map[string]*av {
	if m == nil {
		return nil
	}
	out := make(map[string]*av, len(m))
	for k, v := range m {
		if v != nil && v.M != nil {
			c := *v
			c.M = copyItem(v.M)
			v = &c
		}
		out[k] = v
	}
	return out
}

// unused refuses ExpressionAttributeNames and ExpressionAttributeValues no expression used,
// as DynamoDB does.
func unused(names map[string]string, values map[string]*av, used map[string]bool) error {
	for k := range names {
		if !used[k] {
			return validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", k)
		}
	}
	for k := range values {
		if !used[k] {
			return validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", k)
		}
	}
	return nil
}

// encodeRaw writes an item in the wire format.
func encodeRaw(item map[string]*av) json.RawMessage {
	var b bytes.Buffer
	encodeItem(&b, item)
	return b.Bytes()
}

// updateOp is a parsed Update (of UpdateItem or a transaction): its key, update and condition.
type updateOp struct {
	pk, sk string
	key    map[string]*av
	update *updateExpr
	cond   *node
}

// parseUpdateOp parses an update's expressions and checks its placeholders.
func parseUpdateOp(t *table, key map[string]*av, c *condInput, expr string) (*updateOp, error) {
	pk, sk, err := t.keyOf(key)
	if err != nil {
		return nil, err
	}
	if want := map[bool]int{true: 1, false: 2}[t.rng == ""]; len(key) != want {
		return nil, validation("The provided key element does not match the schema")
	}
	used := map[string]bool{}
	u, err := parseUpdate(expr, c.ExpressionAttributeNames, c.ExpressionAttributeValues, used)
	if _, ok := err.(*apiError); err != nil && !ok {
		return nil, validation("Invalid UpdateExpression: %v", err)
	} else if err != nil {
		return nil, err
	}
	cond, err := c.parse(used)
	if err != nil {
		return nil, err
	}
	if err := unused(c.ExpressionAttributeNames, c.ExpressionAttributeValues, used); err != nil {
		return nil, err
	}
	return &updateOp{pk: pk, sk: sk, key: key, update: u, cond: cond}, nil
}

// run computes the new item against the current one (nil when absent). The caller holds the
// write lock.
func (op *updateOp) run(t *table, current *rec) (*rec, error) {
	var old map[string]*av
	if current != nil {
		var err error
		if old, err = decodeItem(current.raw); err != nil {
			return nil, &apiError{"InternalServerError", err.Error()}
		}
	}
	item, err := op.update.apply(t, old, op.key)
	if err != nil {
		return nil, err
	}
	return t.newRec(encodeRaw(item))
}

func (s *Server) updateItem(body []byte) (any, error) {
	var in struct {
		condInput
		Key              map[string]*av
		UpdateExpression string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	switch in.ReturnValues {
	case "", "NONE", "ALL_OLD", "ALL_NEW":
	default:
		return nil, validation("memdyn does not implement ReturnValues %s", in.ReturnValues)
	}
	if in.UpdateExpression == "" {
		return nil, validation("memdyn needs an UpdateExpression (AttributeUpdates is not implemented)")
	}
	s.mu.Lock() // the generation advances once the condition held (see putItem)
	defer s.mu.Unlock()
	t, err := s.table(in.TableName)
	if err != nil {
		return nil, err
	}
	op, err := parseUpdateOp(t, in.Key, &in.condInput, in.UpdateExpression)
	if err != nil {
		return nil, err
	}
	current := t.get(op.pk, op.sk)
	if err := in.failed(op.cond, current); err != nil {
		return nil, err
	}
	r, err := op.run(t, current)
	if err != nil {
		return nil, err
	}
	s.gen.Add(1)
	old := t.store(r)
	units := writeUnits(r.size)
	if old != nil {
		units = max(units, writeUnits(old.size))
	}
	var o obj
	switch {
	case in.ReturnValues == "ALL_OLD" && old != nil:
		o.raw("Attributes", old.raw)
	case in.ReturnValues == "ALL_NEW":
		o.raw("Attributes", r.raw)
	}
	o.capacity(in.ReturnConsumedCapacity, capacity{in.TableName, units})
	return o.bytes(), nil
}
