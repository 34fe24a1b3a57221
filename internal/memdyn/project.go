package memdyn

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// projection is a parsed ProjectionExpression: top-level attributes, and map members of
// top-level attributes ("Data.name"). Deeper paths and list indexes are refused.
type projection struct {
	top     []string            // whole attributes
	nested  map[string][]string // attribute -> members of its map
	parents []string            // the keys of nested, sorted
	key     string              // the resolved paths in order: names it in the per-item cache
}

// projectedItem is an item as the last projection that read it wrote it.
type projectedItem struct {
	key string
	out []byte
}

// parseProjection reads "a, #b, #c.#d" with names resolved through names (marking them used).
func parseProjection(expr string, names map[string]string, used map[string]bool) (*projection, error) {
	p := &projection{nested: map[string][]string{}}
	var key strings.Builder
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
			key.WriteString(e)
			key.WriteByte(0)
		}
		key.WriteByte(1)
		switch len(elems) {
		case 1:
			p.top = append(p.top, elems[0])
		case 2:
			p.nested[elems[0]] = append(p.nested[elems[0]], elems[1])
		default:
			return nil, validation("ProjectionExpression: memdyn supports paths of at most two names, not %q", path)
		}
	}
	for name := range p.nested {
		p.parents = append(p.parents, name)
	}
	sort.Strings(p.parents)
	p.key = key.String()
	return p, nil
}

// parsed is an item split into its attributes, and its map attributes into their members
// (each kept with its name already quoted), built once per stored item the first time a
// projection reads it.
type parsed struct {
	attrs   map[string]quoted
	members map[string]map[string]quoted // of the attributes that are maps
}

type quoted struct {
	name  []byte // the JSON string of the name
	value json.RawMessage
}

func quote(s string) []byte {
	q, _ := json.Marshal(s)
	return q
}

func (r *rec) parsed() (*parsed, error) {
	if p := r.split.Load(); p != nil {
		return p, nil
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(r.raw, &attrs); err != nil {
		return nil, err
	}
	p := &parsed{attrs: make(map[string]quoted, len(attrs)), members: map[string]map[string]quoted{}}
	for name, v := range attrs {
		p.attrs[name] = quoted{quote(name), v}
		var m struct{ M map[string]json.RawMessage }
		if bytes.HasPrefix(v, []byte(`{"M"`)) && json.Unmarshal(v, &m) == nil && m.M != nil {
			members := make(map[string]quoted, len(m.M))
			for k, mv := range m.M {
				members[k] = quoted{quote(k), mv}
			}
			p.members[name] = members
		}
	}
	r.split.Store(p)
	return p, nil
}

// apply writes the projected item. Stored items never change (a write stores a new rec), so
// the output is kept for the next read with the same projection: the server asks the same one
// of every item of a range, run after run.
func (p *projection) apply(r *rec) ([]byte, error) {
	if c := r.projected.Load(); c != nil && c.key == p.key {
		return c.out, nil
	}
	out, err := p.write(r)
	if err == nil {
		r.projected.Store(&projectedItem{p.key, out})
	}
	return out, err
}

// write builds the projected item.
func (p *projection) write(r *rec) ([]byte, error) {
	x, err := r.parsed()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 512)
	n := 0
	member := func(q quoted) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(append(append(b, q.name...), ':'), q.value...)
	}
	b = append(b, '{')
	for _, name := range p.top {
		if _, nested := p.nested[name]; nested {
			continue // written below, whole
		}
		if q, ok := x.attrs[name]; ok {
			member(q)
		}
	}
	for _, name := range p.parents {
		q, ok := x.attrs[name]
		if !ok {
			continue
		}
		if slices.Contains(p.top, name) { // the whole attribute wins over its members
			member(q)
			continue
		}
		m, ok := x.members[name]
		if !ok {
			continue
		}
		sub := append([]byte(nil), `{"M":{`...)
		k := 0
		for _, key := range p.nested[name] {
			mq, ok := m[key]
			if !ok {
				continue
			}
			if k > 0 {
				sub = append(sub, ',')
			}
			k++
			sub = append(append(append(sub, mq.name...), ':'), mq.value...)
		}
		if k > 0 {
			member(quoted{q.name, append(sub, "}}"...)})
		}
	}
	return append(b, '}'), nil
}
