package memdyn

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// projection is a parsed ProjectionExpression: top-level attributes, and map members of
// top-level attributes ("Data.name"). Deeper paths and list indexes are refused.
type projection struct {
	top    []string            // whole attributes
	nested map[string][]string // attribute -> members of its map
}

// parseProjection reads "a, #b, #c.#d" with names resolved through names (marking them used).
func parseProjection(expr string, names map[string]string, used map[string]bool) (*projection, error) {
	p := &projection{nested: map[string][]string{}}
	for _, path := range strings.Split(expr, ",") {
		var elems []string
		for _, e := range strings.Split(strings.TrimSpace(path), ".") {
			e = strings.TrimSpace(e)
			if strings.HasPrefix(e, "#") {
				v, ok := names[e]
				if !ok {
					return nil, validation("ProjectionExpression: An expression attribute name used in the document path is not defined; attribute name: %s", e)
				}
				used[e] = true
				e = v
			}
			if e == "" || strings.ContainsAny(e, "[]") {
				return nil, validation("ProjectionExpression: memdyn supports attribute names and map members, not %q", path)
			}
			elems = append(elems, e)
		}
		switch len(elems) {
		case 1:
			p.top = append(p.top, elems[0])
		case 2:
			p.nested[elems[0]] = append(p.nested[elems[0]], elems[1])
		default:
			return nil, validation("ProjectionExpression: memdyn supports paths of at most two names, not %q", path)
		}
	}
	return p, nil
}

// parsed is an item split into its attributes, and its map attributes into their members,
// built once per stored item the first time a projection reads it.
type parsed struct {
	attrs   map[string]json.RawMessage
	members map[string]map[string]json.RawMessage // of the attributes that are maps
}

func (r *rec) parsed() (*parsed, error) {
	if p := r.split.Load(); p != nil {
		return p, nil
	}
	p := &parsed{members: map[string]map[string]json.RawMessage{}}
	if err := json.Unmarshal(r.raw, &p.attrs); err != nil {
		return nil, err
	}
	for name, v := range p.attrs {
		var m struct{ M map[string]json.RawMessage }
		if bytes.HasPrefix(v, []byte(`{"M"`)) && json.Unmarshal(v, &m) == nil && m.M != nil {
			p.members[name] = m.M
		}
	}
	r.split.Store(p)
	return p, nil
}

// apply writes the projected item.
func (p *projection) apply(r *rec) ([]byte, error) {
	x, err := r.parsed()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	n := 0
	member := func(name string, v []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		q, _ := json.Marshal(name)
		b.Write(q)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('{')
	for _, name := range p.top {
		if _, nested := p.nested[name]; nested {
			continue // the whole attribute wins over its members
		}
		if v, ok := x.attrs[name]; ok {
			member(name, v)
		}
	}
	parents := make([]string, 0, len(p.nested))
	for name := range p.nested {
		parents = append(parents, name)
	}
	sort.Strings(parents)
	for _, name := range parents {
		if v, ok := x.attrs[name]; ok && contains(p.top, name) {
			member(name, v)
			continue
		}
		m, ok := x.members[name]
		if !ok {
			continue
		}
		var sub bytes.Buffer
		k := 0
		for _, key := range p.nested[name] {
			v, ok := m[key]
			if !ok {
				continue
			}
			if k > 0 {
				sub.WriteByte(',')
			}
			k++
			q, _ := json.Marshal(key)
			sub.Write(q)
			sub.WriteByte(':')
			sub.Write(v)
		}
		if k > 0 {
			member(name, []byte(`{"M":{`+sub.String()+`}}`))
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
