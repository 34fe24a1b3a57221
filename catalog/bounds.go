package catalog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Bounds of an entity's free text and lists, generous for real use. They keep a name short
// enough for an index key and every field far from filling a DynamoDB item, and tell a client
// which field is too long; the store still refuses an item over DynamoDB's 400 KB as a whole.
// IDs, business domains and component types are identifiers, bounded by the store (128
// characters).
const (
	// MaxNameLength bounds names (of capabilities, components and rules), in characters.
	MaxNameLength = 200
	// MaxDescriptionLength bounds descriptions, in characters.
	MaxDescriptionLength = 4_000
	// MaxTextLength bounds every other text field (owners, versions, URLs...), in characters.
	MaxTextLength = 1_000
	// MaxListLength bounds every list (tags, endpoints, target components, conditions...): more
	// than MaxOrder, so that a job can target every component of its capability.
	MaxListLength = 100
	// MaxJSONBytes bounds each free-form JSON value (feature flags, dimensions, a condition's
	// value or values, an action's parameters), encoded.
	MaxJSONBytes = 16 << 10
)

// textLimit returns the bound of a text field by its JSON name.
func textLimit(name string) int {
	switch name {
	case "name", "componentName", "sourceComponentName", "targetComponentName":
		return MaxNameLength
	case "description":
		return MaxDescriptionLength
	}
	return MaxTextLength
}

// checkBounds returns a *ValidationError naming the first field of entity (a pointer to one of
// the entity types) that is over its bound: text by textLimit, lists by MaxListLength, free-form
// JSON by MaxJSONBytes. Fields are named by their JSON path, e.g. "deployment.endpoints[2].url".
func checkBounds(entity any) error {
	return bounds("", "", reflect.ValueOf(entity))
}

// bounds checks v, found at path under the JSON field name.
func bounds(path, name string, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return bounds(path, name, v.Elem())
	case reflect.String:
		if n, limit := utf8.RuneCountInString(v.String()), textLimit(name); n > limit {
			return Invalid(path, "is %d characters long; the limit is %d", n, limit)
		}
	case reflect.Interface, reflect.Map:
		return jsonBounds(path, v)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Interface {
			return jsonBounds(path, v) // a list of JSON values is one JSON value
		}
		if v.Len() > MaxListLength {
			return Invalid(path, "has %d items; the limit is %d", v.Len(), MaxListLength)
		}
		for i := range v.Len() {
			if err := bounds(fmt.Sprintf("%s[%d]", path, i), name, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[Timestamp]() {
			return nil
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			field, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || field == "-" {
				continue
			}
			if field == "" {
				field = f.Name
			}
			p := field
			if path != "" {
				p = path + "." + field
			}
			if err := bounds(p, field, v.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonBounds checks the encoded size of a free-form JSON value.
func jsonBounds(path string, v reflect.Value) error {
	if v.IsNil() {
		return nil
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return Invalid(path, "is not a JSON value: %v", err)
	}
	if len(b) > MaxJSONBytes {
		return Invalid(path, "is %d bytes of JSON; the limit is %d", len(b), MaxJSONBytes)
	}
	return nil
}
