package dynamo

import gojson "github.com/goccy/go-json"

// decodeJSON decodes the plain-JSON Data of an item read off the wire into an entity. It is
// goccy/go-json, a drop-in for encoding/json (same struct tags, json.Unmarshaler and
// encoding.TextUnmarshaler, float64 numbers in `any`) that decodes the catalogue's entities
// several times faster (BenchmarkWireDecode compares the two); TestWireDecoderMatchesSDK holds
// it to the attributevalue decoding of every entity of the sample catalogue.
func decodeJSON(data []byte, v any) error { return gojson.Unmarshal(data, v) }
