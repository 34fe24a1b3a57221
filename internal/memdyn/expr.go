package memdyn

import (
	"fmt"
	"strings"
)

// A small parser and evaluator for DynamoDB condition expressions: comparisons (= <> < <= > >=),
// BETWEEN, IN, begins_with, contains, attribute_exists, attribute_not_exists, AND, OR, NOT and
// parentheses, over document paths of names (#alias or plain) joined by dots. List indexes and
// size() are not supported: an expression using them is a ValidationException, never a silent
// mismatch.

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokValue
	tokIdent
	tokOp
)

type token struct {
	kind tokKind
	text string
}

func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || c == ':' || isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			kind := tokIdent
			switch c {
			case '#':
				kind = tokName
			case ':':
				kind = tokValue
			}
			out = append(out, token{kind, s[i:j]})
			i = j
		case c == '<' && i+1 < len(s) && (s[i+1] == '=' || s[i+1] == '>'):
			out = append(out, token{tokOp, s[i : i+2]})
			i += 2
		case c == '>' && i+1 < len(s) && s[i+1] == '=':
			out = append(out, token{tokOp, ">="})
			i += 2
		case strings.IndexByte("=<>(),.+-[]", c) >= 0:
			out = append(out, token{tokOp, string(c)})
			i++
		default:
			return nil, fmt.Errorf("unsupported character %q in expression %q", c, s)
		}
	}
	return append(out, token{kind: tokEOF}), nil
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

// node is a parsed expression.
type node struct {
	op   string // and, or, not, cmp, between, in, func
	cmp  string // the comparison operator or function name
	kids []*node
	// operands
	path  []string // resolved attribute names, for a path operand
	value *av      // for a :value operand
	isOp  bool     // an operand (path or value)
}

type parser struct {
	toks   []token
	pos    int
	names  map[string]string
	values map[string]*av
	used   map[string]bool
}

func parseExpr(s string, names map[string]string, values map[string]*av, used map[string]bool) (*node, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, names: names, values: values, used: used}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokEOF {
		return nil, fmt.Errorf("unexpected %q in expression %q", p.peek().text, s)
	}
	return n, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token { t := p.toks[p.pos]; p.pos++; return t }

func (p *parser) keyword(k string) bool {
	t := p.peek()
	if t.kind == tokIdent && strings.EqualFold(t.text, k) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(op string) error {
	if t := p.next(); t.kind != tokOp || t.text != op {
		return fmt.Errorf("expected %q, got %q", op, t.text)
	}
	return nil
}

func (p *parser) or() (*node, error) {
	n, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.keyword("OR") {
		m, err := p.and()
		if err != nil {
			return nil, err
		}
		n = &node{op: "or", kids: []*node{n, m}}
	}
	return n, nil
}

func (p *parser) and() (*node, error) {
	n, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.keyword("AND") {
		m, err := p.unary()
		if err != nil {
			return nil, err
		}
		n = &node{op: "and", kids: []*node{n, m}}
	}
	return n, nil
}

func (p *parser) unary() (*node, error) {
	if p.keyword("NOT") {
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: "not", kids: []*node{n}}, nil
	}
	if t := p.peek(); t.kind == tokOp && t.text == "(" {
		p.pos++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	}
	if t := p.peek(); t.kind == tokIdent && p.toks[p.pos+1].kind == tokOp && p.toks[p.pos+1].text == "(" {
		return p.function()
	}
	left, err := p.operand()
	if err != nil {
		return nil, err
	}
	if p.keyword("BETWEEN") {
		lo, err := p.operand()
		if err != nil {
			return nil, err
		}
		if !p.keyword("AND") {
			return nil, fmt.Errorf("BETWEEN without AND")
		}
		hi, err := p.operand()
		if err != nil {
			return nil, err
		}
		return &node{op: "between", kids: []*node{left, lo, hi}}, nil
	}
	if p.keyword("IN") {
		if err := p.expect("("); err != nil {
			return nil, err
		}
		n := &node{op: "in", kids: []*node{left}}
		for {
			v, err := p.operand()
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, v)
			if t := p.next(); t.text == ")" {
				return n, nil
			} else if t.text != "," {
				return nil, fmt.Errorf("expected , or ) in IN list, got %q", t.text)
			}
		}
	}
	t := p.next()
	switch t.text {
	case "=", "<>", "<", "<=", ">", ">=":
	default:
		return nil, fmt.Errorf("expected a comparison, got %q", t.text)
	}
	right, err := p.operand()
	if err != nil {
		return nil, err
	}
	return &node{op: "cmp", cmp: t.text, kids: []*node{left, right}}, nil
}

func (p *parser) function() (*node, error) {
	name := p.next().text
	p.pos++ // (
	var args []*node
	for {
		a, err := p.operand()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		t := p.next()
		if t.text == ")" {
			break
		}
		if t.text != "," {
			return nil, fmt.Errorf("expected , or ) in %s(), got %q", name, t.text)
		}
	}
	switch name {
	case "begins_with", "contains":
		if len(args) != 2 {
			return nil, fmt.Errorf("%s takes two arguments", name)
		}
	case "attribute_exists", "attribute_not_exists":
		if len(args) != 1 || args[0].path == nil {
			return nil, fmt.Errorf("%s takes one path", name)
		}
	default:
		return nil, fmt.Errorf("function %s is not supported by memdyn", name)
	}
	return &node{op: "func", cmp: name, kids: args}, nil
}

func (p *parser) operand() (*node, error) {
	t := p.next()
	switch t.kind {
	case tokValue:
		v, ok := p.values[t.text]
		if !ok {
			return nil, fmt.Errorf("value %s is not defined in ExpressionAttributeValues", t.text)
		}
		p.used[t.text] = true
		return &node{isOp: true, value: v}, nil
	case tokName, tokIdent:
		var path []string
		for {
			name := t.text
			if t.kind == tokName {
				n, ok := p.names[t.text]
				if !ok {
					return nil, fmt.Errorf("name %s is not defined in ExpressionAttributeNames", t.text)
				}
				p.used[t.text] = true
				name = n
			} else if t.kind != tokIdent {
				return nil, fmt.Errorf("expected an attribute name, got %q", t.text)
			}
			path = append(path, name)
			if n := p.peek(); n.kind == tokOp && n.text == "." {
				p.pos++
				t = p.next()
				continue
			}
			return &node{isOp: true, path: path}, nil
		}
	}
	return nil, fmt.Errorf("expected an operand, got %q", t.text)
}

// resolve returns the value of an operand against an item, nil when the path is absent.
func (n *node) resolve(item map[string]*av) *av {
	if n.value != nil {
		return n.value
	}
	v := item[n.path[0]]
	for _, k := range n.path[1:] {
		if v == nil || v.M == nil {
			return nil
		}
		v = v.M[k]
	}
	return v
}

// attributes appends the top-level attribute names the paths of the condition start with: all
// of the item that eval reads.
func (n *node) attributes(names []string) []string {
	if len(n.path) > 0 {
		names = append(names, n.path[0])
	}
	for _, k := range n.kids {
		names = k.attributes(names)
	}
	return names
}

// eval evaluates a condition against an item.
func (n *node) eval(item map[string]*av) bool {
	switch n.op {
	case "and":
		return n.kids[0].eval(item) && n.kids[1].eval(item)
	case "or":
		return n.kids[0].eval(item) || n.kids[1].eval(item)
	case "not":
		return !n.kids[0].eval(item)
	case "cmp":
		a, b := n.kids[0].resolve(item), n.kids[1].resolve(item)
		switch n.cmp {
		case "=":
			return equal(a, b)
		case "<>":
			return a != nil && b != nil && !equal(a, b)
		}
		c, ok := compare(a, b)
		if !ok {
			return false
		}
		switch n.cmp {
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		case ">=":
			return c >= 0
		}
	case "between":
		v := n.kids[0].resolve(item)
		c1, ok1 := compare(v, n.kids[1].resolve(item))
		c2, ok2 := compare(v, n.kids[2].resolve(item))
		return ok1 && ok2 && c1 >= 0 && c2 <= 0
	case "in":
		v := n.kids[0].resolve(item)
		for _, k := range n.kids[1:] {
			if equal(v, k.resolve(item)) {
				return true
			}
		}
		return false
	case "func":
		switch n.cmp {
		case "attribute_exists":
			return n.kids[0].resolve(item) != nil
		case "attribute_not_exists":
			return n.kids[0].resolve(item) == nil
		case "begins_with":
			a, b := n.kids[0].resolve(item), n.kids[1].resolve(item)
			return a != nil && b != nil && a.S != nil && b.S != nil && strings.HasPrefix(*a.S, *b.S)
		case "contains":
			a, b := n.kids[0].resolve(item), n.kids[1].resolve(item)
			if a == nil || b == nil {
				return false
			}
			switch {
			case a.S != nil && b.S != nil:
				return strings.Contains(*a.S, *b.S)
			case a.L != nil:
				for _, e := range a.L {
					if equal(e, b) {
						return true
					}
				}
			case a.SS != nil && b.S != nil:
				for _, e := range a.SS {
					if e == *b.S {
						return true
					}
				}
			}
			return false
		}
	}
	return false
}

// keyCond is a parsed KeyConditionExpression: the partition key value and an optional sort-key
// condition.
type keyCond struct {
	hash    string
	rangeOp string // "", =, <, <=, >, >=, between, begins_with
	a, b    string
}

// parseKeyCond parses a key condition over the partition key hashAttr and sort key rangeAttr
// (both of type S).
func parseKeyCond(s string, names map[string]string, values map[string]*av, used map[string]bool, hashAttr, rangeAttr string) (*keyCond, error) {
	n, err := parseExpr(s, names, values, used)
	if err != nil {
		return nil, err
	}
	var parts []*node
	var flatten func(*node) error
	flatten = func(n *node) error {
		switch n.op {
		case "and":
			if err := flatten(n.kids[0]); err != nil {
				return err
			}
			return flatten(n.kids[1])
		case "cmp", "between", "func":
			parts = append(parts, n)
			return nil
		}
		return fmt.Errorf("key condition %q: only AND of key comparisons is allowed", s)
	}
	if err := flatten(n); err != nil {
		return nil, err
	}
	kc := &keyCond{}
	seenHash := false
	for _, p := range parts {
		attr := p.kids[0]
		if attr.path == nil || len(attr.path) != 1 {
			return nil, fmt.Errorf("key condition %q: the left side must be a key attribute", s)
		}
		str := func(k *node) (string, error) {
			if k.value == nil || k.value.S == nil {
				return "", fmt.Errorf("key condition %q: key values must be strings", s)
			}
			return *k.value.S, nil
		}
		switch {
		case attr.path[0] == hashAttr && p.op == "cmp" && p.cmp == "=" && !seenHash:
			v, err := str(p.kids[1])
			if err != nil {
				return nil, err
			}
			kc.hash, seenHash = v, true
		case attr.path[0] == rangeAttr && rangeAttr != "" && kc.rangeOp == "":
			switch {
			case p.op == "cmp" && p.cmp != "<>":
				kc.rangeOp = p.cmp
				if kc.a, err = str(p.kids[1]); err != nil {
					return nil, err
				}
			case p.op == "between":
				kc.rangeOp = "between"
				if kc.a, err = str(p.kids[1]); err != nil {
					return nil, err
				}
				if kc.b, err = str(p.kids[2]); err != nil {
					return nil, err
				}
			case p.op == "func" && p.cmp == "begins_with":
				kc.rangeOp = "begins_with"
				if kc.a, err = str(p.kids[1]); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("key condition %q: unsupported sort-key condition", s)
			}
		default:
			return nil, fmt.Errorf("key condition %q: unsupported condition on %s", s, attr.path[0])
		}
	}
	if !seenHash {
		return nil, fmt.Errorf("key condition %q: no equality on the partition key %s", s, hashAttr)
	}
	return kc, nil
}
